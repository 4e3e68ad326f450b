from enum import StrEnum


class JobsExportRetrieveFmt(StrEnum):
    JSON = "json"
    PYTHON = "python"
    WANDB = "wandb"
    YAML = "yaml"

    def __str__(self) -> str:
        return str(self.value)
