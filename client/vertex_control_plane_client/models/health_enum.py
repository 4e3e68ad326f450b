from enum import StrEnum


class HealthEnum(StrEnum):
    OK = "ok"
    STRAGGLER = "straggler"
    SUSPECTED_HANG = "suspected_hang"

    def __str__(self) -> str:
        return str(self.value)
