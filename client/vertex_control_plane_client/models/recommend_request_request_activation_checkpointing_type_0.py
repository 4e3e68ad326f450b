from enum import StrEnum


class RecommendRequestRequestActivationCheckpointingType0(StrEnum):
    FULL = "full"
    NONE = "none"
    SELECTIVE = "selective"

    def __str__(self) -> str:
        return str(self.value)
