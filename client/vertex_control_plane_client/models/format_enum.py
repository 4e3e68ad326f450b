from enum import StrEnum


class FormatEnum(StrEnum):
    CUSTOM_JOB = "custom_job"
    REQUEST = "request"

    def __str__(self) -> str:
        return str(self.value)
