from enum import StrEnum


class ShardingEnum(StrEnum):
    FSDP = "fsdp"
    REPLICATED = "replicated"

    def __str__(self) -> str:
        return str(self.value)
