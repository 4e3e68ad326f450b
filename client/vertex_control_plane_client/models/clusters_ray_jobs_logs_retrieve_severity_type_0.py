from enum import StrEnum


class ClustersRayJobsLogsRetrieveSeverityType0(StrEnum):
    ALERT = "ALERT"
    CRITICAL = "CRITICAL"
    DEBUG = "DEBUG"
    DEFAULT = "DEFAULT"
    EMERGENCY = "EMERGENCY"
    ERROR = "ERROR"
    INFO = "INFO"
    NOTICE = "NOTICE"
    WARNING = "WARNING"

    def __str__(self) -> str:
        return str(self.value)
