"""What the runs app's signals mean for costs (connected in apps.py)."""

from __future__ import annotations

from typing import Any

from controlplane.costs import spend


def on_job_reconciled(job_id: int, **_: Any) -> None:
    spend.refresh(job_id)


def on_jobs_reconciled(job_ids: list[int], **_: Any) -> None:
    spend.refresh_together(job_ids)
