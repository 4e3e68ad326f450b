"""Idle clusters: running, billing, and nothing on them. A cluster is busy while a Ray job of
its own is queued, pending or running, or a CustomJob placed on it (persistentResourceId) is
active; it is idle from the last of those ending (or from when it started running), and
flagged once that is longer than CP_CLUSTER_IDLE_FLAG_S. The sweep records each idle period's
flag once (flag_idle_clusters) and signals it, so the team hears of it once per period.

A team whose policy says so (TeamPolicy.delete_idle_clusters_after_min) has its clusters
deleted once idle that long (delete_idle_clusters): through the same deletion a user asks for,
with the reason in the audit log and a message to the team's channels."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from controlplane.clusters import lifecycle
from controlplane.clusters.models import ENDED_RAY_STATES, Cluster, IdleFlag
from controlplane.core import signals
from controlplane.runs.models import ACTIVE_STATES, Job, JobKind
from controlplane.security import audit
from controlplane.teams.models import TeamPolicy


def placed_jobs(cluster: Cluster):
    """The CustomJobs placed on the cluster (persistentResourceId): its work besides Ray's."""
    return Job.objects.filter(team_id=cluster.team_id, kind=JobKind.JOB,
                              custom_job__jobSpec__persistentResourceId=cluster.vertex_resource_id)


def idle_since(cluster: Cluster) -> datetime | None:
    """When the cluster last had work; None while it has some or is not running."""
    if cluster.state != Cluster.State.RUNNING or cluster.running_since is None:
        return None
    if cluster.ray_jobs.exclude(state__in=ENDED_RAY_STATES).exists() or \
            placed_jobs(cluster).filter(state__in=ACTIVE_STATES).exists():
        return None
    last_ray = cluster.ray_jobs.aggregate(t=Max("ended_at"))["t"]
    last_job = placed_jobs(cluster).aggregate(t=Max("ended_at"))["t"]
    return max(t for t in (cluster.running_since, last_ray, last_job) if t is not None)


def flagged(cluster: Cluster, now: datetime | None = None) -> bool:
    return _past_limit(idle_since(cluster), now or timezone.now())


def _past_limit(since: datetime | None, now: datetime) -> bool:
    limit = timedelta(seconds=settings.CP_CLUSTER_IDLE_FLAG_S)
    return since is not None and now - since > limit


def flag_idle_clusters(now: datetime | None = None) -> list[IdleFlag]:
    """Record a flag for each running cluster idle past the limit whose idle period has none
    yet, and signal it; a period already flagged adds nothing. Returns the new flags."""
    now = now or timezone.now()
    new: list[IdleFlag] = []
    for cluster in Cluster.objects.filter(state=Cluster.State.RUNNING).select_related("team"):
        since = idle_since(cluster)
        if since is None or not _past_limit(since, now):
            continue
        with transaction.atomic():
            flag, created = IdleFlag.objects.get_or_create(
                cluster=cluster, idle_since=since,
                defaults={"flagged_at": now, "hourly_micros": cluster.hourly_micros})
            if created:
                signals.cluster_idle_flagged.send(sender=IdleFlag, flag=flag)
                new.append(flag)
    return new


def delete_idle_clusters(now: datetime | None = None) -> list[IdleFlag]:
    """Delete each running cluster idle longer than its team's policy allows (teams with a
    limit only). The cluster row is locked while it is judged and deleted, as a Ray job's
    submission locks it: a job submitted meanwhile either waits and finds it DELETING, or
    made it busy first. Returns the idle periods that ended in a deletion."""
    now = now or timezone.now()
    limits = dict(TeamPolicy.objects.filter(delete_idle_clusters_after_min__gt=0)
                  .values_list("team_id", "delete_idle_clusters_after_min"))
    deleted: list[IdleFlag] = []
    for pk in Cluster.objects.filter(state=Cluster.State.RUNNING, team_id__in=list(limits)) \
            .values_list("pk", flat=True):
        with transaction.atomic():
            cluster = Cluster.objects.select_for_update().select_related("team").get(pk=pk)
            limit_min = limits[cluster.team_id]
            since = idle_since(cluster)  # None while anything runs on it
            if since is None or now - since <= timedelta(minutes=limit_min):
                continue
            idle_min = int((now - since).total_seconds() // 60)
            flag, _ = IdleFlag.objects.get_or_create(
                cluster=cluster, idle_since=since,
                defaults={"flagged_at": now, "hourly_micros": cluster.hourly_micros})
            lifecycle.request_delete(cluster)
            audit.record_by_policy("cluster.delete_idle", cluster, detail={
                "idle_minutes": idle_min, "policy_minutes": limit_min,
                "idle_since": since.isoformat(),
                "reason": f"deleted after {idle_min} minutes idle, team policy {limit_min}"})
            signals.cluster_idle_deleted.send(sender=IdleFlag, flag=flag,
                                              idle_minutes=idle_min, policy_minutes=limit_min)
            deleted.append(flag)
    return deleted
