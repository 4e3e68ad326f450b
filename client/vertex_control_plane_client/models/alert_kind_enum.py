from enum import StrEnum


class AlertKindEnum(StrEnum):
    BREACH = "BREACH"
    RECOVERY = "RECOVERY"

    def __str__(self) -> str:
        return str(self.value)
