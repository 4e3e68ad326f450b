"""The Celery app and Celery beat's schedule.

Tasks are registered where they live (each app's tasks.py, found through INSTALLED_APPS) with
the one task decorator in controlplane/core/queue.py; beat queues them by name.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery
from celery.signals import task_prerun, worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("controlplane")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def _beat_schedule() -> dict[str, dict[str, Any]]:
    from django.conf import settings

    # Imported when the app is finalized, not with this module: Django's settings are not
    # configured yet when `celery -A config` first imports it.
    from controlplane.serving.schedule import beat_schedule as serving_schedule

    # The queue in front of Vertex (controlplane/runs/admission.py) ticks only where it is on:
    # a task a second that does nothing costs a worker's time all the same.
    admission = {"admit-jobs": {
        "task": "controlplane.runs.tasks.admit_jobs",
        "schedule": settings.CP_RECONCILE_INTERVAL_S,
    }} if settings.CP_ADMISSION else {}
    return {
        **serving_schedule(),
        **admission,
        # Clusters being created, resized or deleted, and Ray jobs still running.
        "reconcile-clusters": {
            "task": "controlplane.clusters.tasks.reconcile_clusters",
            "schedule": settings.CP_RESOURCE_RECONCILE_INTERVAL_S,
        },
        # Clusters idle past their team's limit, deleted (controlplane/clusters/idle.py).
        "delete-idle-clusters": {
            "task": "controlplane.clusters.tasks.delete_idle_clusters",
            "schedule": getattr(settings, "CP_IDLE_DELETE_INTERVAL_S", 60.0),
        },
        "reconcile-jobs": {
            "task": "controlplane.runs.tasks.reconcile_jobs",
            "schedule": settings.CP_RECONCILE_INTERVAL_S,
        },
        # Every unfinished sweep and its trials (controlplane/sweeps/tasks.py).
        "reconcile-sweeps": {
            "task": "controlplane.sweeps.tasks.reconcile_sweeps",
            "schedule": settings.CP_RESOURCE_RECONCILE_INTERVAL_S,
        },
        "follow-logs": {
            "task": "controlplane.logs.tasks.follow_logs",
            "schedule": settings.CP_FOLLOW_INTERVAL_S,
        },
        # Teams whose month's spend crossed their budget (controlplane/costs/budgets.py).
        "check-budgets": {
            "task": "controlplane.costs.tasks.check_budgets",
            "schedule": getattr(settings, "CP_BUDGET_CHECK_INTERVAL_S", 60.0),
        },
        # Slack messages whose delivery failed for a passing reason, tried again.
        "deliver-notifications": {
            "task": "controlplane.notifications.tasks.deliver_pending",
            "schedule": settings.CP_RESOURCE_RECONCILE_INTERVAL_S,
        },
        # The jobs' tally read by the job list's count (controlplane/runs/counts.py).
        "fold-job-tally": {
            "task": "controlplane.runs.tasks.fold_job_tally",
            "schedule": getattr(settings, "CP_TALLY_FOLD_INTERVAL_S", 300.0),
        },
        # Each team's log retention and the downsampling of long runs' metrics.
        "log-retention": {
            "task": "controlplane.logs.tasks.apply_log_retention",
            "schedule": getattr(settings, "CP_LOG_RETENTION_INTERVAL_S", 3600.0),
        },
    }


@app.on_after_finalize.connect
def _setup_periodic_tasks(sender: Celery, **_: Any) -> None:
    sender.conf.beat_schedule = _beat_schedule()


@task_prerun.connect
def _renew_old_connections(sender: Any = None, **_: Any) -> None:
    """Before each task, what Django does before each request: a connection past CONN_MAX_AGE,
    or one that failed, is closed, and the next query checks the one it keeps (settings'
    CONN_HEALTH_CHECKS). A task run eagerly runs inside its caller's connection and
    transaction: left alone."""
    if sender is not None and getattr(getattr(sender, "request", None), "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()


# How a worker process's database connections are named to PostgreSQL (pg_stat_activity's
# application_name): an operator sees which connections are the workers'.
WORKER_CONNECTION_NAME = "controlplane-worker"


@worker_process_init.connect
def _name_worker_connections(**_: Any) -> None:
    from django.db import connections

    for connection in connections.all(initialized_only=False):
        if connection.vendor == "postgresql":
            connection.settings_dict.setdefault("OPTIONS", {})["application_name"] = (
                WORKER_CONNECTION_NAME)
