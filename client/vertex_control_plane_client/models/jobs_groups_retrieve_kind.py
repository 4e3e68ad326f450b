from enum import StrEnum


class JobsGroupsRetrieveKind(StrEnum):
    ALL = "all"
    JOB = "job"
    RAY = "ray"
    TRIAL = "trial"

    def __str__(self) -> str:
        return str(self.value)
