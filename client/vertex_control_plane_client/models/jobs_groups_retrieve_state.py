from enum import StrEnum


class JobsGroupsRetrieveState(StrEnum):
    CANCELLED = "CANCELLED"
    CANCELLING = "CANCELLING"
    FAILED = "FAILED"
    PENDING = "PENDING"
    QUEUED = "QUEUED"
    QUEUED_LOCAL = "QUEUED_LOCAL"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    WAITING_FOR_QUOTA = "WAITING_FOR_QUOTA"

    def __str__(self) -> str:
        return str(self.value)
