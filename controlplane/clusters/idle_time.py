"""How long a team's clusters sat idle in a month, and what that cost: the `idle` category of
the team's goodput (controlplane/costs/goodput.py; registered in ClustersConfig.ready, since
costs may not import clusters).

Idle as controlplane/clusters/idle.py judges a cluster now, over the month: up (from
running_since until its deletion, or now) while none of its Ray jobs is queued, pending or
running (from its creation to its end) and no CustomJob placed on it (persistentResourceId)
is active (likewise). Its creation before it ran is provisioning, not idle. The cost is the
cluster's hourly price over the idle seconds, in whole micro-dollars (rounded down), as its
spend (controlplane/clusters/spend.py) prices its time; so the idle dollars are a part of
what the cluster billed in the month.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timedelta
from typing import Any

from django.db.models import Q

from controlplane.clusters.idle import placed_jobs
from controlplane.clusters.models import Cluster
from controlplane.clusters.spend import _month_bounds
from controlplane.costs.goodput import IdleResource, accelerators

MICROSECOND = timedelta(microseconds=1)
MICROSECONDS_PER_HOUR = 3600 * 10**6


def month_idle(team: Any, month: date, now: datetime) -> list[IdleResource]:
    """Each of the team's clusters that was up in the month, with its idle time in it (a
    cluster busy all along is listed with 0)."""
    start, end = _month_bounds(month)
    clusters = Cluster.objects.filter(team=team, running_since__isnull=False,
                                      running_since__lt=min(end, now)).filter(
        Q(deleted_at__isnull=True) | Q(deleted_at__gt=start)).order_by("running_since", "pk")
    out = []
    for cluster in clusters:
        since = max(cluster.running_since, start)
        until = min(cluster.deleted_at or now, end, now)
        if until <= since:
            continue
        idle = (until - since) - _covered(_busy(cluster, now), since, until)
        idle_us = idle // MICROSECOND
        out.append(IdleResource(
            name=f"Ray cluster {cluster.name} #{cluster.pk}",
            accelerators=accelerators(_as_custom_job(cluster.resource)),
            idle_seconds=idle_us / 10**6,
            micros=cluster.hourly_micros * idle_us // MICROSECONDS_PER_HOUR))
    return out


def _busy(cluster: Cluster, now: datetime) -> list[tuple[datetime, datetime]]:
    """When anything was on the cluster: each Ray job's and placed job's creation to end."""
    spans = list(cluster.ray_jobs.values_list("created_at", "ended_at"))
    spans += list(placed_jobs(cluster).values_list("created_at", "ended_at"))
    return [(begun, ended or now) for begun, ended in spans]


def _covered(spans: Iterable[tuple[datetime, datetime]], since: datetime,
             until: datetime) -> timedelta:
    """How much of [SINCE, UNTIL) the union of SPANS covers."""
    total, reached = timedelta(0), since
    for begun, ended in sorted(spans):
        begun, ended = max(begun, reached), min(ended, until)
        if ended > begun:
            total += ended - begun
            reached = ended
    return total


def _as_custom_job(resource: dict[str, Any]) -> dict[str, Any]:
    """The resource's pools as a CustomJob's worker pools, to count accelerators as a job's."""
    pools = resource.get("resourcePools") or []
    return {"jobSpec": {"workerPoolSpecs": [
        {"machineSpec": pool.get("machineSpec") or {},
         "replicaCount": str(pool.get("replicaCount") or 1)} for pool in pools]}}
