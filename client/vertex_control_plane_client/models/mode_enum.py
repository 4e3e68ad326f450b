from enum import StrEnum


class ModeEnum(StrEnum):
    FULL_SHARD = "full_shard"
    HYBRID_SHARD = "hybrid_shard"
    SHARD_GRAD_OP = "shard_grad_op"

    def __str__(self) -> str:
        return str(self.value)
