"""What the runs app's signals mean for the logs (connected in apps.py)."""

from __future__ import annotations

from typing import Any

from controlplane.logs import restarts


def on_restarts_due(job_id: int, force: bool = False, **_: Any) -> None:
    restarts.refresh(job_id, force=force)
