from enum import StrEnum


class DeliveryEnum(StrEnum):
    FAILED = "FAILED"
    PENDING = "PENDING"
    SENDING = "SENDING"
    SENT = "SENT"
    UNKNOWN = "UNKNOWN"

    def __str__(self) -> str:
        return str(self.value)
