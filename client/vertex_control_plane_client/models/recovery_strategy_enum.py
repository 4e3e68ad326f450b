from enum import StrEnum


class RecoveryStrategyEnum(StrEnum):
    EAGER_NEXT_REGION = "eager_next_region"
    FAILOVER = "failover"
    NONE = "none"

    def __str__(self) -> str:
        return str(self.value)
