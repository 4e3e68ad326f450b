from enum import StrEnum


class TypeEnum(StrEnum):
    ANY_RESERVATION = "ANY_RESERVATION"
    NO_RESERVATION = "NO_RESERVATION"
    SPECIFIC_RESERVATION = "SPECIFIC_RESERVATION"

    def __str__(self) -> str:
        return str(self.value)
