from enum import StrEnum


class OnExceedEnum(StrEnum):
    CANCEL = "cancel"
    NOTIFY = "notify"

    def __str__(self) -> str:
        return str(self.value)
