"""What an export says beside its file: the CustomJob fields a W&B Launch queue config has no
place for (the scheduling strategy, say), in the X-Not-Exported header of the response."""

from __future__ import annotations

import re
from typing import Any

from django.http import HttpResponse

from vertexplan.interop import wandb_launch

NOT_EXPORTED_HEADER = "X-Not-Exported"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.]")


def mark_not_carried(response: HttpResponse, custom_job: dict[str, Any], fmt: str) -> None:
    if fmt != "wandb":
        return
    lost = [_UNSAFE.sub("?", name)[:200] for name in wandb_launch.unsupported(custom_job)]
    if lost:
        response[NOT_EXPORTED_HEADER] = ", ".join(lost[:50])
