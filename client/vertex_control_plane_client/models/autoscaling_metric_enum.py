from enum import StrEnum


class AutoscalingMetricEnum(StrEnum):
    ACCELERATOR = "accelerator"
    CPU = "cpu"

    def __str__(self) -> str:
        return str(self.value)
