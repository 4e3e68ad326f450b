from enum import StrEnum


class StatusEnum(StrEnum):
    BREACHED = "BREACHED"
    OK = "OK"

    def __str__(self) -> str:
        return str(self.value)
