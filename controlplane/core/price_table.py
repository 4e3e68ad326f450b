"""The price table in force and the estimates the product shows and stores.

The shipped table (vertexplan/pricing/data) is used until ``refresh_prices`` has written a newer one
to CP_PRICES_FILE; a job's own cost always comes from the snapshot it stored, never from here.
"""

from __future__ import annotations

import threading
from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings

from vertexplan.catalog.values import parse_duration
from vertexplan.pricing import Estimate, PriceTable, default_table, job_estimate, load_table
from vertexplan.pricing.parse import retrieved_dates
from vertexplan.pricing.snapshot import snapshot as price_snapshot

REFRESHED_SOURCE = "Cloud Billing Catalog API (refresh_prices), over the shipped table"
# Vertex stops a job at Scheduling.timeout; without one, after 7 days.
DEFAULT_TIMEOUT_HOURS = Decimal(7 * 24)

_lock = threading.Lock()
_cached: tuple[float, PriceTable] | None = None


def prices_file() -> Path:
    return Path(getattr(settings, "CP_PRICES_FILE", "") or
                Path(settings.VAR_DIR) / "prices" / "vertex_training_prices.csv")


def current_table() -> PriceTable:
    """The refreshed table when there is one (re-read when the file changes), else the
    shipped one."""
    global _cached
    path = prices_file()
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return default_table()
    with _lock:
        if _cached is None or _cached[0] != mtime:
            _cached = (mtime, load_table(path.read_text("utf-8"), source=REFRESHED_SOURCE))
        return _cached[1]


def estimate(custom_job: dict[str, Any], region: str) -> Estimate:
    """The job's hourly estimate at today's table; PricingError when it cannot be priced."""
    return job_estimate.hourly(custom_job, region, current_table())


def timeout_hours(custom_job: dict[str, Any]) -> Decimal:
    """How long Vertex lets the job run: its Scheduling.timeout, or Vertex's 7 days."""
    scheduling = (custom_job.get("jobSpec") or {}).get("scheduling") or {}
    seconds = parse_duration(scheduling.get("timeout"))
    if seconds is None or seconds <= 0:
        return DEFAULT_TIMEOUT_HOURS
    return seconds / 3600


def table_info(table: PriceTable | None = None, estimate: Estimate | None = None
               ) -> dict[str, Any]:
    """Where the prices come from and when they were read, to show beside an estimate."""
    table = table or current_table()
    used = estimate.retrieved if estimate is not None else None
    return {
        "source": table.source,
        "retrieved": used[1] if used else table.newest_retrieved,
        "oldest_retrieved": used[0] if used else table.oldest_retrieved,
        "newest_retrieved": used[1] if used else table.newest_retrieved,
    }


def snapshot_date(snapshot: dict[str, Any] | None) -> str | None:
    """The newest retrieval date of a stored snapshot's prices."""
    if not snapshot:
        return None
    dates = [d for line in snapshot.get("lines", []) for d in retrieved_dates(
        str(line.get("retrieved", "")))]
    return max(dates) if dates else None


class PricedJob:
    """A job's estimate, its snapshot, and what it may cost until its timeout at its rate."""

    def __init__(self, custom_job: dict[str, Any], region: str) -> None:
        self.estimate = estimate(custom_job, region)
        self.snapshot = price_snapshot(self.estimate)
        self.hours = timeout_hours(custom_job)
        totals = job_estimate.for_duration(self.estimate, self.hours)
        rate = totals.get(self.estimate.rate_name)
        self.micros = totals.on_demand if rate is None else rate


def price_job(custom_job: dict[str, Any], region: str) -> tuple[PricedJob | None, str]:
    """(the priced job, "") or (None, why it cannot be priced)."""
    try:
        return PricedJob(custom_job, region), ""
    except job_estimate.PricingError as exc:
        return None, str(exc)
