from enum import StrEnum


class CauseEnum(StrEnum):
    BACKEND = "backend"
    CRASH = "crash"
    HANG = "hang"
    PREEMPTION = "preemption"
    RESTART = "restart"
    STOCKOUT = "stockout"

    def __str__(self) -> str:
        return str(self.value)
