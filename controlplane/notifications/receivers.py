"""What the other apps' signals mean for a team's Slack channels (connected in apps.py)."""

from __future__ import annotations

from typing import Any

from controlplane.clusters.models import IdleFlag
from controlplane.notifications import service
from controlplane.notifications.models import NotifyOn
from controlplane.runs.models import Job, JobAttempt, JobEvent, JobRestart
from controlplane.serving.models import SloAlert


def on_job_state_changed(job: Job, event: JobEvent, **_: Any) -> None:
    if job.on_job_path:  # a trial or Ray job: its sweep or cluster is what the team follows
        service.on_state_change(job, event)


def on_attempt_submitted(job: Job, attempt: JobAttempt, **_: Any) -> None:
    if attempt.number == 1:  # recoveries have their own messages
        service.notify(job, "submitted", key="submitted",
                       detail={"vertex_name": attempt.vertex_name})


def on_budget_crossed(job: Job, key: str, detail: dict[str, Any], **_: Any) -> None:
    service.notify(job, "budget", key=key, detail=detail)


def on_queue_wait_long(job: Job, detail: dict[str, Any], **_: Any) -> None:
    service.notify(job, NotifyOn.QUEUE, key=f"waiting-a{detail['attempt']}",
                   detail={"what": "waiting", **detail})


def on_restart_recorded(job: Job, record: JobRestart, created: bool, resumed_now: bool,
                        **_: Any) -> None:
    key = f"restart-a{record.attempt}-r{record.ordinal}"
    if created:
        service.notify(job, "preempted", key=key, detail={
            "cause": record.get_cause_display(), "replica": record.replica, "step": record.step,
            "note": record.signal, "restarts": job.restarts + 1,
        })
    if resumed_now:
        how = "running again"
        if record.resumed_from_step is not None:
            how += f", resumed from the checkpoint of step {record.resumed_from_step}"
        if record.steps_lost is not None:
            how += f" ({record.steps_lost} steps lost)"
        service.notify(job, "recovered", key=f"{key}-resumed", detail={"how": how})


def on_job_health_changed(job: Job, event: JobEvent, **_: Any) -> None:
    """A suspected hang is alerted (a straggler is shown on the job's page and timeline)."""
    if event.kind != "suspected_hang":
        return
    data = event.data
    lines = "; ".join(f"{replica}: {line}" for replica, line in
                      (data.get("last_lines") or {}).items())
    note = f"{data.get('why', '')}. {data.get('restart', '')}."
    if lines:
        note += f" Last lines: {lines}"
    service.notify(job, "preempted", key=f"hang-a{event.attempt}", detail={
        "cause": "suspected hang", "replica": "", "step": event.step, "note": note})


def on_slo_alert_raised(alert: SloAlert, **_: Any) -> None:
    service.notify_slo_alert(alert)


def on_cluster_idle_flagged(flag: IdleFlag, **_: Any) -> None:
    service.notify_cluster_idle(flag)


def on_cluster_idle_deleted(flag: IdleFlag, idle_minutes: int, policy_minutes: int,
                            **_: Any) -> None:
    service.notify_cluster_idle(flag, deleted={"idle_minutes": idle_minutes,
                                               "policy_minutes": policy_minutes})
