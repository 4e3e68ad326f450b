from enum import StrEnum


class SchedulingStrategyEnum(StrEnum):
    FLEX_START = "FLEX_START"
    SPOT = "SPOT"
    STANDARD = "STANDARD"

    def __str__(self) -> str:
        return str(self.value)
