from enum import StrEnum


class SourceEnum(StrEnum):
    GOOGLE = "google"
    TEAM = "team"

    def __str__(self) -> str:
        return str(self.value)
