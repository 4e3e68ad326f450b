"""Every task's time limits, and the broker's visibility timeout they must stay below
(controlplane/core/task_limits.py). tests/core/test_hung_task.py shows a real worker killing a
hung task at its limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from celery.signals import before_task_publish
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from config.celery import app as celery_app
from config.devstack import ROOT
from controlplane.core.queue import send_now
from controlplane.core.task_limits import (
    COUNTDOWN_MARGIN_S,
    broker_countdown,
    check_visibility_timeout,
    soft_limit,
)

# The tasks that may run for minutes over big tables; every other task has the default limit.
LONG_RUNNING = {"controlplane.logs.tasks.apply_log_retention",
                "controlplane.serving.tasks.prune_latency_samples"}


def project_tasks() -> dict[str, Any]:
    celery_app.loader.import_default_modules()
    return {name: t for name, t in celery_app.tasks.items() if name.startswith("controlplane.")}


def test_a_singleton_sweep_is_stopped_before_its_lease_runs_out() -> None:
    reconcile = project_tasks()["controlplane.runs.tasks.reconcile_jobs"]
    assert reconcile.singleton_ttl_s == 30
    assert reconcile.time_limit == 30 < settings.CP_TASK_TIME_LIMIT_S


def test_every_task_is_stopped_before_the_broker_would_deliver_it_again() -> None:
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    tasks = project_tasks()
    assert len(tasks) > 20 and set(tasks) >= LONG_RUNNING
    for name, task in tasks.items():
        hard = (settings.CP_LONG_TASK_TIME_LIMIT_S if name in LONG_RUNNING
                else settings.CP_TASK_TIME_LIMIT_S)
        # A singleton never runs past its lease, when the next run may take it.
        if task.singleton_ttl_s is not None:
            hard = min(hard, task.singleton_ttl_s)
        assert task.time_limit == hard, name
        assert task.soft_time_limit == soft_limit(hard) < hard < visibility, name
        # Killed at its limit, its message is acknowledged, not handed to another worker.
        assert task.acks_late and task.acks_on_timeout and task.reject_on_worker_lost, name
    # Celery's own tasks get the default limits from the settings.
    assert celery_app.conf.task_time_limit == settings.CP_TASK_TIME_LIMIT_S
    assert celery_app.conf.task_soft_time_limit == soft_limit(settings.CP_TASK_TIME_LIMIT_S)


def test_a_visibility_timeout_not_above_the_longest_limit_is_refused() -> None:
    limits = {"CP_TASK_TIME_LIMIT_S": 300, "CP_LONG_TASK_TIME_LIMIT_S": 540}
    check_visibility_timeout(541, limits)
    check_visibility_timeout(None, limits)  # the demo's SQL broker has no visibility timeout
    for visibility in (540, 400):
        with pytest.raises(ImproperlyConfigured) as refused:
            check_visibility_timeout(visibility, limits)
        assert str(refused.value).startswith(
            f"CP_BROKER_VISIBILITY_TIMEOUT_S={visibility} must be above the longest task time "
            "limit, CP_LONG_TASK_TIME_LIMIT_S=540")


@pytest.mark.parametrize(("env", "named"), [
    ({"CP_BROKER_VISIBILITY_TIMEOUT_S": "500"}, "CP_LONG_TASK_TIME_LIMIT_S=540"),
    ({"CP_TASK_TIME_LIMIT_S": "900"}, "CP_TASK_TIME_LIMIT_S=900"),
])
def test_a_process_with_such_settings_does_not_start(env: dict[str, str], named: str) -> None:
    started = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "true",
             "CELERY_BROKER_URL": "redis://127.0.0.1:6379/15", **env}, timeout=120)
    assert started.returncode != 0
    assert "ImproperlyConfigured: CP_BROKER_VISIBILITY_TIMEOUT_S=" in started.stderr
    assert f"limit, {named}:" in started.stderr


def test_a_countdown_ends_with_the_tasks_limit_inside_the_visibility_timeout() -> None:
    room = 600 - 300 - COUNTDOWN_MARGIN_S
    assert broker_countdown(30.0, visibility_s=600, hard_s=300) == 30.0
    assert broker_countdown(3600.0, visibility_s=600, hard_s=300) == room
    assert broker_countdown(None, visibility_s=600, hard_s=300) is None
    assert broker_countdown(3600.0, visibility_s=None, hard_s=300) == 3600.0
    assert broker_countdown(60.0, visibility_s=305, hard_s=300) == 0.0


@pytest.fixture
def published() -> Iterator[list[dict[str, Any]]]:
    """The headers of every task message this process publishes, while the test runs; the
    messages are taken off the broker's queue afterwards (no worker consumes it here)."""
    seen: list[dict[str, Any]] = []

    def record(headers: dict[str, Any], routing_key: str, **_: Any) -> None:
        seen.append({**headers, "queue": routing_key})

    before_task_publish.connect(record, weak=False)
    yield seen
    before_task_publish.disconnect(record)
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    ids = {headers["id"] for headers in seen}
    for headers in seen:
        for raw in client.lrange(headers["queue"], 0, -1):
            if json.loads(raw)["headers"]["id"] in ids:
                client.lrem(headers["queue"], 1, raw)


def test_a_long_delay_reaches_the_broker_shortened(published: list[dict[str, Any]]) -> None:
    """A quota wait or a recovery backoff may be longer than the visibility timeout allows:
    the message is due sooner, and the task, finding the job not due yet, does nothing (the
    reconcile sweep queues it again when it is)."""
    from datetime import datetime

    send_now("controlplane.runs.tasks.submit_job", "0", countdown=3 * 3600)
    send_now("controlplane.runs.tasks.submit_job", "0", countdown=20)
    [long, short] = published
    room = 600 - settings.CP_TASK_TIME_LIMIT_S - COUNTDOWN_MARGIN_S
    long_s = (datetime.fromisoformat(long["eta"]) - datetime.fromisoformat(short["eta"]))
    assert room - 20 - 5 < long_s.total_seconds() <= room - 20
