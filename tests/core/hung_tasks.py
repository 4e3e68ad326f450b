"""Tasks made with the project's task decorator for tests/core/test_hung_task.py's worker: one
that hangs, ignoring its soft time limit as a task with a broad `except Exception` would, and
one that answers. Each records what happened to it in Redis under the test's key prefix."""

from __future__ import annotations

import os
import threading

import redis
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from controlplane.core.queue import task


def _record(token: str, what: str) -> None:
    client = redis.Redis.from_url(settings.CELERY_BROKER_URL)
    client.rpush(f"{os.environ['CP_TEST_BROKER_PREFIX']}record:{token}", what)


@task()
def hang(token: str) -> None:
    _record(token, f"started {os.getpid()}")
    never = threading.Event()
    try:
        never.wait()
    except SoftTimeLimitExceeded:
        _record(token, "soft limit")
    never.wait()  # hangs on: only the hard limit ends it
    _record(token, "finished")


@task()
def answer(token: str) -> None:
    _record(token, "answered")
