from enum import StrEnum


class JobsListKind(StrEnum):
    ALL = "all"
    JOB = "job"
    RAY = "ray"
    TRIAL = "trial"

    def __str__(self) -> str:
        return str(self.value)
