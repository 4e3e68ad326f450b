"""Celery tasks of costs."""

from __future__ import annotations

from controlplane.core.queue import task
from controlplane.costs import budgets


@task(singleton_ttl_s=120)
def check_budgets() -> None:
    """Teams whose month's spend crossed their budget: cancel or notify, once per crossing."""
    budgets.check_crossings()
