"""Celery tasks of the logs package (discovered with autodiscover_tasks(["jobs.logs"]))."""

from __future__ import annotations

from controlplane.celery import task
from jobs.logs import retention


@task(singleton_ttl_s=3600)
def apply_log_retention() -> None:
    """Delete what each team's retention no longer keeps; downsample long runs' metrics."""
    retention.apply()
