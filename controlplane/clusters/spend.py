"""What a team's clusters cost in a month: each bills its hourly price for every hour of the
month it existed (from creation to deletion, busy or not). Counted in the team's month by
controlplane.costs (registered in ClustersConfig.ready)."""

from __future__ import annotations

from datetime import UTC, date, datetime

from django.db.models import Q
from django.utils import timezone

from controlplane.clusters.models import Cluster


def _month_bounds(month: date) -> tuple[datetime, datetime]:
    start = datetime(month.year, month.month, 1, tzinfo=UTC)
    end = datetime(month.year + (month.month == 12), month.month % 12 + 1, 1, tzinfo=UTC)
    return start, end


def month_micros(team, month: date, now: datetime | None = None) -> int:
    start, end = _month_bounds(month)
    now = now or timezone.now()
    total = 0
    clusters = Cluster.objects.filter(team=team, created_at__lt=end).filter(
        Q(deleted_at__isnull=True) | Q(deleted_at__gt=start))
    for cluster in clusters:
        since = max(cluster.billed_since, start)
        until = min(cluster.deleted_at or now, end, now)
        seconds = max((until - since).total_seconds(), 0.0)
        total += int(cluster.hourly_micros * seconds / 3600)
    return total
