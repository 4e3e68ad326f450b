from enum import StrEnum


class NotifyOnEnum(StrEnum):
    BUDGET = "budget"
    CANCELLED = "cancelled"
    FAILED = "failed"
    PREEMPTED = "preempted"
    QUEUE = "queue"
    QUOTA = "quota"
    RECOVERED = "recovered"
    RUNNING = "running"
    SUBMITTED = "submitted"
    SUCCEEDED = "succeeded"

    def __str__(self) -> str:
        return str(self.value)
