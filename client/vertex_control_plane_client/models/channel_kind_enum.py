from enum import StrEnum


class ChannelKindEnum(StrEnum):
    BOT = "bot"
    WEBHOOK = "webhook"

    def __str__(self) -> str:
        return str(self.value)
