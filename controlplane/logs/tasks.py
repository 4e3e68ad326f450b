"""Celery tasks of logs."""

from __future__ import annotations

from controlplane.core.queue import task
from controlplane.logs import follower, retention


@task(singleton_ttl_s=3600, long_running=True)
def apply_log_retention() -> None:
    """Delete what each team's retention no longer keeps; downsample long runs' metrics."""
    retention.apply()


@task(singleton_ttl_s=120, idle=follower.nothing_to_follow)
def follow_logs() -> None:
    follower.follow()
