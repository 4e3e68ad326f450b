"""Tasks are queued and leased by name (controlplane/core/queue.py): every name written in the
code must be one a worker has, or the message is dropped and the lease guards nothing."""

from __future__ import annotations

import re
from pathlib import Path

from config.celery import app as celery_app
from config.devstack import ROOT
from controlplane.logs.management.commands import follow_logs


def registered() -> set[str]:
    celery_app.loader.import_default_modules()
    return {name for name in celery_app.tasks if name.startswith("controlplane.")}


def test_every_beat_entry_queues_a_task_that_exists() -> None:
    celery_app.finalize()
    schedule = celery_app.conf.beat_schedule
    assert schedule
    missing = {entry["task"] for entry in schedule.values()} - registered()
    assert not missing


def test_the_follow_logs_command_holds_the_beat_tasks_lease() -> None:
    """`manage.py follow_logs` and beat's follow_logs task take the same singleton lease, so
    the two never sweep Cloud Logging at once."""
    assert follow_logs.LEASE in registered()
    assert follow_logs.LEASE.endswith(".follow_logs")


def test_every_task_named_in_the_code_exists() -> None:
    """A string naming a task (TASKS + "name", "controlplane.x.tasks.name") names a registered
    one."""
    names = registered()
    written = set()
    for path in (ROOT / "controlplane").rglob("*.py"):
        text = Path(path).read_text()
        written |= set(re.findall(r"[\"'](controlplane\.\w+\.tasks\.\w+)[\"']", text))
    assert written and written <= names, sorted(written - names)


def test_the_admission_tick_is_scheduled_only_where_the_queue_is_on(settings) -> None:
    from config.celery import _beat_schedule

    settings.CP_ADMISSION = False
    assert "admit-jobs" not in _beat_schedule()
    settings.CP_ADMISSION = True
    assert _beat_schedule()["admit-jobs"]["task"] in registered()
