"""What a team's clusters cost in a month: each bills its hourly price for every hour of the
month it existed (from creation to deletion, busy or not). Counted in the team's month by
controlplane.costs (registered in ClustersConfig.ready)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from django.db.models import Q
from django.utils import timezone

from controlplane.clusters.models import Cluster
from controlplane.costs import spend


def _month_bounds(month: date) -> tuple[datetime, datetime]:
    start = datetime(month.year, month.month, 1, tzinfo=UTC)
    end = datetime(month.year + (month.month == 12), month.month % 12 + 1, 1, tzinfo=UTC)
    return start, end


# Every cluster's series adds to this one of the charts' accelerator series.
CLUSTERS_KIND = "Ray clusters"


def _billed(team, month: date, now: datetime) -> list[tuple[Cluster, datetime, datetime, int]]:
    """Each of the team's clusters that existed in the month: the span of the month it billed
    (from creation or the month's start, to deletion, the month's end or now) and its cost."""
    start, end = _month_bounds(month)
    out = []
    clusters = Cluster.objects.filter(team=team, created_at__lt=end).filter(
        Q(deleted_at__isnull=True) | Q(deleted_at__gt=start)).order_by("created_at", "pk")
    for cluster in clusters:
        since = max(cluster.billed_since, start)
        until = min(cluster.deleted_at or now, end, now)
        seconds = max((until - since).total_seconds(), 0.0)
        out.append((cluster, since, until, int(cluster.hourly_micros * seconds / 3600)))
    return out


def month_micros(team, month: date, now: datetime | None = None) -> int:
    return sum(micros for *_, micros in _billed(team, month, now or timezone.now()))


def month_series(team, month: date, now: datetime) -> list[spend.SpendPart]:
    """The same, by day for the costs page's charts: one series per cluster, spread over the
    days it billed, adding up to month_micros."""
    return [spend.SpendPart(name=f"Ray cluster {cluster.name} #{cluster.pk}", kind=CLUSTERS_KIND,
                            days=spend.spread_by_day(micros, since, until, since))
            for cluster, since, until, micros in _billed(team, month, now)]
