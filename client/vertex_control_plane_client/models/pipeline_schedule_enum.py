from enum import StrEnum


class PipelineScheduleEnum(StrEnum):
    GPIPE = "gpipe"
    INTERLEAVED_1F1B = "interleaved_1f1b"
    VALUE_1 = "1f1b"

    def __str__(self) -> str:
        return str(self.value)
