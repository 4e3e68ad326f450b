from enum import StrEnum


class JobKindEnum(StrEnum):
    JOB = "job"
    RAY = "ray"
    TRIAL = "trial"

    def __str__(self) -> str:
        return str(self.value)
