"""The queue in front of Vertex: which QUEUED_LOCAL jobs are admitted (and so submitted), which
borrowing jobs are stopped at a checkpoint and requeued for another team's guarantee, and why
and where each other job waits. The decision is vertexplan.fairshare.decide's; this module
reads its state from the database and the project's quotas, and applies it.

Exactly once: a tick runs under the `queue-admission` lease and inside one transaction that
locks every QUEUED_LOCAL row, so two beat ticks, or a worker killed half-way (its transaction
rolls back, its lease expires), never admit a job twice nor lose one.

Off unless settings.CP_ADMISSION: then new jobs wait in QUEUED_LOCAL (lifecycle.record_job)
until a tick admits them.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from contract import quota_metrics
from controlplane.backends import errors, quotas
from controlplane.backends.base import TERMINAL_VERTEX_STATES, get_backend
from controlplane.core import signals
from controlplane.core.leases import held_lease
from controlplane.core.queue import enqueue
from controlplane.runs import checkpoints, holders
from controlplane.runs.models import Job, JobAttempt, JobKind, JobState, display_name_for
from controlplane.teams import quotas as team_quotas
from controlplane.teams.models import Team, TeamPolicy, TeamQuota
from vertexplan import fairshare
from vertexplan import quota as plan_quota

logger = logging.getLogger(__name__)

LEASE = "queue-admission"
LEASE_TTL = timedelta(seconds=60)
SUBMIT_TASK = "controlplane.runs.tasks.submit_job"
# States in which a job holds (or is about to hold) its accelerators on Vertex.
HOLDING = (JobState.QUEUED, JobState.WAITING_FOR_QUOTA, JobState.PENDING, JobState.RUNNING,
           JobState.CANCELLING)
WINDOW = timedelta(hours=24)
# What a waiting job's queue entry keeps from round to round (the rest is the round's): the
# run it waits to stop, and the attempt whose wait was told to Slack.
WAIT_ALERTED = "wait_alerted"
KEPT = ("stopping", WAIT_ALERTED)


def enabled() -> bool:
    return bool(getattr(settings, "CP_ADMISSION", False))


def demand_of(job: Job) -> dict[fairshare.Flavor, int]:
    """The accelerators the job holds at once, per flavor (type, region, spot or not)."""
    attempt = job.current_attempt()
    spec = attempt.submitted_spec if attempt and attempt.submitted_spec else job.custom_job
    region = (attempt.region if attempt else "") or job.region
    return holders.demand(plan_quota.needs(spec), region)


def project_quota(flavors: set[fairshare.Flavor]) -> dict[fairshare.Flavor, int]:
    """The project's Vertex quota of each flavor, from the Cloud Quotas API (cached); a flavor
    whose limit cannot be read, or is unlimited, is left out (no known limit)."""
    out = {}
    for flavor in flavors:
        metric = quota_metrics.metric(flavor.family, preemptible=flavor.spot)
        if metric is None:
            continue
        try:
            found = quotas.limit(metric, flavor.region)
        except errors.BackendError as exc:
            logger.warning("admission: quota %s in %s unreadable: %s", metric, flavor.region, exc)
            continue
        if found is not None and found.value is not None and not found.unlimited:
            out[flavor] = int(found.value)
    return out


def _ts(at: datetime | None) -> float | None:
    return at.timestamp() if at else None


def limit_of(custom_job: dict[str, Any]) -> float | None:
    """The job's timeout in seconds (scheduling.timeout, "86400s"); None when not set."""
    raw = ((custom_job.get("jobSpec") or {}).get("scheduling") or {}).get("timeout")
    try:
        return float(str(raw).removesuffix("s")) if raw else None
    except ValueError:
        return None


def _plan_job(job: Job, demand: dict[fairshare.Flavor, int], lose_work: set[int],
              checkpointed: set[int], *, stopping: bool = False,
              waiting: bool = False) -> fairshare.Job:
    attempt = job.current_attempt() if waiting else None
    return fairshare.Job(
        id=str(job.pk), team=job.team.slug, demand=demand, priority=job.priority,
        submitted_at=job.created_at.timestamp(),
        # Only a job on the job path is stopped and requeued; a trial is its sweep's. A job
        # not started yet is taken to checkpoint (the trainers save on SIGTERM); once running,
        # only one that has saved a checkpoint is stopped without losing work.
        checkpointing=job.kind == JobKind.JOB and (job.pk in checkpointed or waiting),
        may_lose_work=job.kind == JobKind.JOB and job.team_id in lose_work,
        started_at=_ts(job.started_at), stopping=stopping, limit_s=limit_of(job.custom_job),
        # Stopped for another team: it waits again from then (its age stays created_at).
        queued_at=(attempt.created_at.timestamp()
                   if attempt is not None and attempt.reason == "requeue" else None))


def _usage(now: datetime, others: list[holders.Held]) -> dict[str, dict[fairshare.Flavor, float]]:
    """Accelerator-seconds each team's jobs (and its `others`, its clusters) held over the
    window (from their start to their end or now)."""
    since = now - WINDOW
    out: dict[str, dict[fairshare.Flavor, float]] = {}
    for other in others:
        seconds = ((other.until or now) - max(other.since, since)).total_seconds()
        team = out.setdefault(other.team, {})
        for flavor, n in other.demand.items():
            team[flavor] = team.get(flavor, 0.0) + n * max(seconds, 0.0)
    jobs = (Job.objects.filter(started_at__isnull=False).exclude(kind=JobKind.RAY)
            .exclude(ended_at__lt=since).select_related("team").prefetch_related("attempts"))
    for job in jobs:
        seconds = ((job.ended_at or now) - max(job.started_at, since)).total_seconds()
        if seconds <= 0:
            continue
        team = out.setdefault(job.team.slug, {})
        for flavor, n in demand_of(job).items():
            team[flavor] = team.get(flavor, 0.0) + n * seconds
    return out


def _still_stopping(job: Job) -> bool:
    """Whether the earlier run of a requeued job still holds its accelerators."""
    stopping = (job.queue or {}).get("stopping")
    if not stopping:
        return False
    try:
        backend = get_backend()
        region = stopping.get("region") or job.region
        if region and region != backend.region and hasattr(backend, "for_region"):
            backend = backend.for_region(region)
        remote = backend.get_custom_job(stopping["vertex_name"])
    except errors.NotFound:
        return False
    except errors.BackendError as exc:
        logger.warning("admission: job %s's stopping run unreadable: %s", job.pk, exc)
        return True  # holds until seen ended: never over the quota
    if remote.state in TERMINAL_VERTEX_STATES:
        return False
    if remote.state != "JOB_STATE_CANCELLING":
        # The cancel was lost (a broker or backend failure after the round committed): ask
        # again, as the reconciler does for a lost cancel.
        _cancel(stopping["vertex_name"], region)
    return True


def plan_state(now: datetime, waiting_rows: list[Job]
               ) -> tuple[fairshare.State, dict[str, Job]]:
    """The queue as vertexplan.fairshare reads it: every job holding accelerators, those of
    `waiting_rows` (the QUEUED_LOCAL jobs), the teams' quotas and usage, the project's quota;
    and the waiting rows by the ids the decisions name."""
    holding = list(Job.objects.filter(state__in=HOLDING).exclude(kind=JobKind.RAY)
                   .select_related("team").prefetch_related("attempts"))
    rows = list(TeamQuota.objects.select_related("team"))
    lose_work = {row.team_id for row in rows if row.preempt_without_checkpoint}
    ids = [j.pk for j in holding]
    checkpointed = set(Job.objects.filter(pk__in=ids, events__kind="checkpoint_saved")
                       .values_list("pk", flat=True))
    running, waiting = [], []
    for job in holding:
        running.append(_plan_job(job, demand_of(job), lose_work, checkpointed))
    others = holders.held_since(now - WINDOW)
    # Held outside the job path (a cluster): counted, never stopped for another team.
    running += [fairshare.Job(id=other.key, team=other.team, demand=other.demand,
                              submitted_at=other.since.timestamp(),
                              started_at=other.since.timestamp(), checkpointing=False)
                for other in others if other.until is None]
    for job in waiting_rows:
        demand = demand_of(job)
        if (job.queue or {}).get("stopping"):
            # Its earlier run holds its accelerators until it has saved and stopped.
            running.append(_plan_job(job, demand, lose_work, checkpointed, stopping=True))
        else:
            waiting.append(_plan_job(job, demand, lose_work, checkpointed, waiting=True))
    flavors = {f for j in running + waiting for f in j.demand}
    state = fairshare.State(
        now=now.timestamp(), quotas=team_quotas.plan_quotas(rows),
        project_quota=project_quota(flavors), running=running, waiting=waiting,
        usage=_usage(now, others), window_s=WINDOW.total_seconds())
    return state, {str(j.pk): j for j in waiting_rows}


def tick() -> fairshare.Decisions | None:
    """One admission round; None when another worker holds the lease."""
    with held_lease(LEASE, LEASE_TTL) as mine:
        if not mine:
            return None
        # Backend reads first, outside the transaction: which stopping runs have ended.
        for job in Job.objects.filter(state=JobState.QUEUED_LOCAL, queue__has_key="stopping"):
            if not _still_stopping(job):
                with transaction.atomic():
                    locked = Job.objects.select_for_update().get(pk=job.pk)
                    locked.queue = {k: v for k, v in (locked.queue or {}).items()
                                    if k != "stopping"}
                    locked.save(update_fields=["queue"])
        cancels: list[tuple[str, str]] = []
        with transaction.atomic():
            # The job rows only (of="self"): their teams' rows stay free for anyone.
            waiting_rows = list(Job.objects.select_for_update(of=("self",))
                                .filter(state=JobState.QUEUED_LOCAL).select_related("team")
                                .prefetch_related("attempts"))
            now = timezone.now()
            state, by_id = plan_state(now, waiting_rows)
            decisions = fairshare.decide(state)
            for job_id in decisions.admit:
                _admit(by_id[job_id])
            for refusal in decisions.refused:
                by_id[refusal.job_id].update_state(JobState.FAILED, error=refusal.reason,
                                                   source="admission")
            for preemption in decisions.preempt:
                stopped = _requeue(preemption, now)
                if stopped:
                    cancels.append(stopped)
            alert_after = _wait_alert_limits({by_id[w.job_id].team_id
                                              for w in decisions.waiting})
            for waiting in decisions.waiting:
                job = by_id[waiting.job_id]
                detail = {**{k: v for k, v in (job.queue or {}).items() if k in KEPT},
                          "reason": waiting.reason, "place": waiting.place}
                if waiting.earliest_start is not None:
                    detail["earliest_start"] = datetime.fromtimestamp(
                        waiting.earliest_start, tz=UTC).isoformat()
                _alert_long_wait(job, detail, alert_after.get(job.team_id), now)
                if detail != job.queue:
                    job.queue = detail
                    job.save(update_fields=["queue"])
        for vertex_name, region in cancels:
            _cancel(vertex_name, region)
        return decisions


def _wait_alert_limits(team_ids: set[int]) -> dict[int, int]:
    """team -> the minutes of waiting its policy tells its channels of (teams that ask)."""
    return dict(TeamPolicy.objects.filter(team_id__in=team_ids, queue_wait_alert_min__gt=0)
                .values_list("team_id", "queue_wait_alert_min"))


def waiting_since(job: Job) -> datetime:
    """When the job began its present wait: its submission, or its requeue when it was
    stopped for another team."""
    attempt = job.current_attempt()
    return attempt.created_at if attempt is not None and attempt.reason == "requeue" \
        else job.created_at


def _alert_long_wait(job: Job, detail: dict[str, Any], limit_min: int | None,
                     now: datetime) -> None:
    """Past its team's limit, the job's wait is told once (its attempt number noted in
    `detail`, the job's queue entry; Slack's message keyed by it too, so a second round adds
    nothing); a requeue starts a new wait, told again."""
    if not limit_min or detail.get(WAIT_ALERTED) == job.attempt:
        return
    waited = now - waiting_since(job)
    if waited < timedelta(minutes=limit_min):
        return
    detail[WAIT_ALERTED] = job.attempt
    signals.queue_wait_long.send(sender=Job, job=job, detail={
        "waited_min": int(waited.total_seconds() // 60), "limit_min": limit_min,
        "reason": detail["reason"], "place": detail["place"],
        "earliest_start": detail.get("earliest_start"), "attempt": job.attempt})


def _admit(job: Job) -> None:
    job.queue = {}
    job.save(update_fields=["queue"])
    job.update_state(JobState.QUEUED, source="admission")
    JobAttempt.objects.filter(job=job, number=job.attempt).update(
        submit_queued_at=timezone.now())
    enqueue(SUBMIT_TASK, str(job.pk))


def _requeue(preemption: fairshare.Preemption, now: datetime) -> tuple[str, str] | None:
    """Stop a running job for another team's guarantee: a new attempt waits in QUEUED_LOCAL
    (resuming from the checkpoint the run saves when Vertex's cancel sends it SIGTERM, as a
    spot preemption does) while the old run stops. Returns the run to cancel."""
    job = (Job.objects.select_for_update(of=("self",)).select_related("team")
           .get(pk=int(preemption.job_id)))
    if job.state not in (JobState.PENDING, JobState.RUNNING, JobState.QUEUED,
                         JobState.WAITING_FOR_QUOTA):
        return None
    old = job.current_attempt()
    number = job.attempt + 1
    newest = checkpoints.newest(job)
    JobAttempt.objects.create(
        job=job, number=number, display_name=display_name_for(job.pk, number), reason="requeue",
        scheduling=old.scheduling if old else "", region=(old.region if old else job.region),
        resume_checkpoint=newest.path if newest else "",
        resume_step=newest.step if newest else None)
    job.attempt = number
    stopping = ({"attempt": old.number, "vertex_name": old.vertex_name, "region": old.region}
                if old and old.vertex_name else None)
    for_job = Job.objects.select_related("team").only("team__slug").get(
        pk=int(preemption.for_job_id))
    job.queue = {"reason": f"stopped at a checkpoint for job {for_job.pk} of team "
                           f"{for_job.team.slug}, within its guarantee",
                 **({"stopping": stopping} if stopping else {})}
    job.save(update_fields=["attempt", "queue"])
    job.events.create(kind="requeued", attempt=number, timestamp=now, data={
        "for_job": for_job.pk, "for_team": for_job.team.slug, "from_attempt": number - 1,
        "lost_accelerator_s": preemption.lost_accelerator_s,
        "resume_step": newest.step if newest else None})
    job.update_state(JobState.QUEUED_LOCAL, source="admission")
    return (old.vertex_name, old.region or job.region) if stopping else None


def _cancel(vertex_name: str, region: str) -> None:
    """Vertex's cancel: the replicas get SIGTERM, save a checkpoint and exit."""
    backend = get_backend()
    if region and region != backend.region and hasattr(backend, "for_region"):
        backend = backend.for_region(region)
    try:
        backend.cancel_custom_job(vertex_name)
    except (errors.FailedPrecondition, errors.NotFound):
        pass  # it has ended already
    except errors.BackendError as exc:
        # The next round sees the run still going and asks again.
        logger.warning("admission: cancelling %s failed: %s", vertex_name, exc)


def over_quota(team: Team, quota: TeamQuota | None) -> list[dict[str, Any]]:
    """Each flavor where the team's jobs and clusters hold more than its quota allows now:
    they run on, and no new job of the team starts there until they are below."""
    if quota is None:
        return []
    held: dict[fairshare.Flavor, int] = {}
    for job in (Job.objects.filter(team=team, state__in=HOLDING).exclude(kind=JobKind.RAY)
                .prefetch_related("attempts")):
        for flavor, n in demand_of(job).items():
            held[flavor] = held.get(flavor, 0) + n
    for other in holders.held_since(timezone.now()):  # its clusters
        if other.team == team.slug and other.until is None:
            for flavor, n in other.demand.items():
                held[flavor] = held.get(flavor, 0) + n
    out = []
    for flavor, limit in team_quotas.plan_quotas([quota]).get(team.slug, {}).items():
        if held.get(flavor, 0) > limit.ceiling:
            out.append({"flavor": flavor.label(), "held": held[flavor],
                        "allowed": limit.guarantee + (limit.borrowing_limit or 0),
                        "note": "jobs already running go on; no new job of the team starts "
                                "on this flavor until they hold less"})
    return out


def queue_rows(team_ids: list[int], team_slug: str | None = None) -> list[dict[str, Any]]:
    """The queue as a team sees it: its jobs waiting here (in place order, with why) and those
    holding accelerators on Vertex (borrowing when the team holds more than its guarantee)."""
    jobs = (Job.objects.filter(team_id__in=team_ids,
                               state__in=(JobState.QUEUED_LOCAL, *HOLDING))
            .exclude(kind=JobKind.RAY).select_related("team").prefetch_related("attempts")
            .order_by("created_at", "pk"))
    if team_slug:
        jobs = jobs.filter(team__slug=team_slug)
    rows = list(TeamQuota.objects.filter(team_id__in=team_ids).select_related("team"))
    guarantees = team_quotas.plan_quotas(rows)
    held: dict[tuple[str, fairshare.Flavor], int] = {}
    # The teams' clusters hold their part of each guarantee first.
    for other in holders.held_since(timezone.now()):
        if other.until is None:
            for flavor, n in other.demand.items():
                held[(other.team, flavor)] = held.get((other.team, flavor), 0) + n
    out = []
    for job in jobs:
        demand = demand_of(job)
        waiting = job.state == JobState.QUEUED_LOCAL
        borrowing = False
        if not waiting:
            for flavor, n in demand.items():
                key = (job.team.slug, flavor)
                held[key] = held.get(key, 0) + n
                quota = guarantees.get(job.team.slug, {}).get(flavor)
                borrowing |= held[key] > (quota.guarantee if quota else 0)
        out.append({
            "id": job.pk, "name": job.name, "team": job.team.slug, "state": job.state,
            "priority": job.priority, "place": (job.queue or {}).get("place") if waiting else None,
            "reason": (job.queue or {}).get("reason", "") if waiting else "",
            "earliest_start": (job.queue or {}).get("earliest_start") if waiting else None,
            "borrowing": borrowing,
            "accelerators": ", ".join(f"{n} {f.label()}" for f, n in sorted(demand.items()))})
    out.sort(key=lambda r: (r["place"] is None, r["place"] or 0, r["id"]))
    return out
