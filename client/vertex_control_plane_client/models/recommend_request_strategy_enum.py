from enum import StrEnum


class RecommendRequestStrategyEnum(StrEnum):
    ANY = "any"
    DDP = "ddp"
    FSDP = "fsdp"
    TPU_JAX = "tpu_jax"
    TPU_XLA = "tpu_xla"
    ZERO1 = "zero1"
    ZERO2 = "zero2"
    ZERO3 = "zero3"

    def __str__(self) -> str:
        return str(self.value)
