from enum import StrEnum


class RuntimeEnum(StrEnum):
    AOT = "aot"
    COMPILED = "compiled"
    EAGER = "eager"
    TENSORRT = "tensorrt"
    TRITON = "triton"
    VLLM = "vllm"

    def __str__(self) -> str:
        return str(self.value)
