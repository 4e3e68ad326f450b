from enum import StrEnum


class JobsMetricsRetrieveNameItem(StrEnum):
    LOSS = "loss"
    LR = "lr"
    MFU = "mfu"
    STEP_TIME_S = "step_time_s"
    TOKENS_PER_S = "tokens_per_s"

    def __str__(self) -> str:
        return str(self.value)
