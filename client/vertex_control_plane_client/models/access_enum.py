from enum import StrEnum


class AccessEnum(StrEnum):
    DEDICATED = "dedicated"
    PRIVATE = "private"
    PUBLIC = "public"

    def __str__(self) -> str:
        return str(self.value)
