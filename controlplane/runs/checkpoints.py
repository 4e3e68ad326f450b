"""A job's checkpoints as they are now: each `checkpoint_saved` event, less those a later
`checkpoint_deleted` event (the trainer's keep-last-K rotation) says are gone.

The job page, a resubmission and a recovery read this one list, so none of them offers or
resumes from a checkpoint rotation removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Prefetch

from controlplane.runs.models import Job, JobEvent

KINDS = ("checkpoint_saved", "checkpoint_deleted")


@dataclass(frozen=True)
class Checkpoint:
    step: int
    path: str
    attempt: int
    saved_at: datetime
    data: dict[str, Any]


def _step(event: JobEvent) -> int | None:
    step = event.step if event.step is not None else event.data.get("step")
    return step if isinstance(step, int) and not isinstance(step, bool) else None


def existing_from(events: Iterable[JobEvent]) -> list[Checkpoint]:
    """The checkpoints still on storage, newest step first, from events in timeline order."""
    alive: dict[str, Checkpoint] = {}
    for event in sorted(events, key=lambda e: (e.timestamp, e.pk or 0)):
        path = str(event.data.get("path") or "").rstrip("/")
        step = _step(event)
        if not path:
            continue
        if event.kind == "checkpoint_deleted":
            alive.pop(path, None)
        elif event.kind == "checkpoint_saved" and step is not None:
            alive[path] = Checkpoint(step, path, event.attempt, event.timestamp, event.data)
    return sorted(alive.values(), key=lambda c: (c.step, c.saved_at), reverse=True)


# Where prefetch() leaves a job's checkpoint events: a page that shows the checkpoints in
# several panels (header, list, serving) reads them once.
PREFETCHED = "checkpoint_events"


def prefetch() -> Prefetch:
    """For a job query: its checkpoint events, read with it, that existing() then uses."""
    return Prefetch("events", queryset=JobEvent.objects.filter(kind__in=KINDS),
                    to_attr=PREFETCHED)


def existing(job: Job) -> list[Checkpoint]:
    events = getattr(job, PREFETCHED, None)
    return existing_from(events if events is not None else job.events.filter(kind__in=KINDS))


def listed(job: Job) -> list[dict[str, Any]]:
    """The checkpoints that still exist as the API's job record lists them."""
    return [{"step": c.step, "path": c.path, "attempt": c.attempt,
             "saved_at": c.saved_at.isoformat()} for c in existing(job)]


def newest(job: Job) -> Checkpoint | None:
    found = existing(job)
    return found[0] if found else None


def at_step(job: Job, step: int) -> Checkpoint | None:
    return next((c for c in existing(job) if c.step == step), None)
