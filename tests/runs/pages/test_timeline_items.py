"""The timeline's items and the checkpoint rows (Jinja2 templates under controlplane/runs/jinja2/,
placed by the `timeline_items` and `checkpoint_rows` tags): what each kind of event says, in the
current time zone, and every value a trainer or a user wrote escaped."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from html import unescape

import pytest
from django.utils import timezone

from controlplane.runs.checkpoints import Checkpoint
from controlplane.runs.models import JobEvent, JobRestart
from controlplane.runs.templatetags import jobs_ui

T = datetime(2026, 5, 1, 12, 30, 45, 123456, tzinfo=UTC)
HOSTILE = '<script>alert("x")</script>'


def event(kind: str, step: int | None = None, replica: str = "workerpool0-0",
          **data: object) -> JobEvent:
    return JobEvent(pk=41, job_id=1, attempt=2, kind=kind, timestamp=T, replica=replica,
                    step=step, data=data)


def event_item(event: JobEvent) -> str:
    return str(jobs_ui.timeline_items([{"event": event}]))


def restart_item(record: JobRestart) -> str:
    return str(jobs_ui.timeline_items([{"restart": record}]))


def checkpoint_row(checkpoint: Checkpoint) -> str:
    return str(jobs_ui.checkpoint_rows([checkpoint]))


def text(html: str) -> str:
    """What a reader sees: the tags gone, whitespace collapsed."""
    return re.sub(r"[ \n]+", " ", unescape(re.sub(r"<[^>]+>", " ", html))).strip()


@pytest.mark.parametrize(("item", "says"), [
    (event("state", **{"from": "PENDING", "to": "RUNNING", "source": "poll"}),
     "a2 state PENDING → RUNNING (poll) workerpool0-0"),
    (event("checkpoint_saved", 50, path="gs://b/s", bytes=1048576, seconds=0.44),
     "checkpoint step 50 gs://b/s 1.0\xa0MB in 0.4 s"),
    (event("checkpoint_deleted", 50, path="gs://b/s"),
     "checkpoint deleted step 50 (rotation) gs://b/s"),
    (event("resumed", 7, path="gs://p"), "resumed from step 7 gs://p"),
    (event("preempted", signal="SIGTERM", checkpoint_path="gs://c"),
     "preempted (SIGTERM) at step ? saved gs://c"),
    (event("run_started", rank=0, world_size=8, strategy="fsdp", resumed_from_step=40,
           dims={"tensor": 2, "data": 2.0, "zz": 3}),
     "run started rank 0/8, fsdp data 2 x tensor 2 x zz 3 , resuming at step 40"),
    (event("run_finished", 100, final_loss=1.23456, wall_s=33.6),
     "run finished at step 100, loss 1.2346, 34 s"),
    (event("eval", 10, metrics={"acc": 0.5}), "eval at step 10 acc=0.5"),
    (event("hosts", num_processes=4, source="x"), "hosts num_processes=4"),
    (event("recovery", recovery=1, max=3, scheduling="SPOT", region="us-east1",
           resume_step=40, delay_s=30, why="preempted", skipped=["a region"]),
     "recovery 1 of 3: attempt 2 on SPOT in us-east1 from checkpoint step 40, after 30 s "
     "preempted skipped a region"),
    (event("recovery_refused", why="no more tries"), "no recovery no more tries"),
    (event("submitted", vertex_name="projects/p/x", scheduling="FLEX_START", region="eu"),
     "submitted projects/p/x FLEX_START in eu"),
])
def test_each_kind_of_event_says_what_happened(item: JobEvent, says: str) -> None:
    timezone.activate("UTC")
    html = event_item(item)
    assert html.startswith(f'<li class="event kind-{item.kind}"')
    assert text(html).startswith("05-01 12:30:45")
    assert says in text(html)


def test_times_are_in_the_readers_zone() -> None:
    timezone.activate("America/New_York")
    try:
        html = event_item(event("state", to="RUNNING"))
    finally:
        timezone.deactivate()
    assert 'datetime="2026-05-01T08:30:45.123456-04:00">05-01 08:30:45</time>' in html


def test_a_restart_links_the_checkpoint_it_resumed_from() -> None:
    record = JobRestart(pk=7, job_id=1, attempt=1, replica="workerpool0-0", ordinal=1,
                        cause="preemption", signal="S" * 200, occurred_at=T, step=45,
                        resumed_from_step=40, checkpoint_id=41, steps_lost=5, resumed_at=T)
    html = restart_item(record)
    assert html.startswith('<li class="event kind-preempted kind-restart" '
                           'id="timeline-restart-7">')
    assert '<a href="#event-41">checkpoint step 40</a>' in html
    assert "restart spot preemption at step 45 → resumed from checkpoint step 40 (5 steps " \
           "lost)" in text(html)
    assert "S" * 159 + "…" in html and "S" * 160 not in html
    # The checkpoint's own item carries the anchor.
    assert 'id="event-41"' in event_item(event("checkpoint_saved", 40, path="gs://b"))

    waiting = JobRestart(pk=8, job_id=1, attempt=1, ordinal=2, cause="crash", occurred_at=T,
                         steps_lost=1, resumed_from_step=3)
    assert "(1 step lost)" in text(restart_item(waiting))
    assert "waiting to restart" in text(restart_item(
        JobRestart(pk=9, job_id=1, attempt=1, ordinal=3, cause="crash", occurred_at=T)))


@pytest.mark.parametrize("kind", ["state", "checkpoint_saved", "resumed", "preempted",
                                  "run_started", "run_finished", "replica_restarted", "eval",
                                  "recovery", "recovery_refused", "submitted", HOSTILE])
def test_no_value_is_ever_markup(kind: str) -> None:
    """Event data comes from trainers' log lines: every value, key and the kind escaped."""
    data = {key: HOSTILE for key in ("from", "to", "source", "error", "path", "signal",
                                     "checkpoint_path", "rank", "world_size", "strategy",
                                     "text", "why", "vertex_name", "scheduling", "region",
                                     "recovery", "max", "delay_s", "resume_path")}
    data |= {"metrics": {HOSTILE: HOSTILE}, "dims": {HOSTILE: HOSTILE}, "skipped": [HOSTILE],
             HOSTILE: HOSTILE, "resume_step": HOSTILE, "resumed_from_step": HOSTILE}
    html = event_item(event(kind, replica=HOSTILE, **data))
    assert "<script" not in html and "&lt;script&gt;" in html
    record = JobRestart(pk=1, job_id=1, attempt=1, replica=HOSTILE, ordinal=1, cause="crash",
                        signal=HOSTILE, occurred_at=T)
    assert "<script" not in restart_item(record)
    row = checkpoint_row(Checkpoint(1, HOSTILE, 1, T, {"bytes": None}))
    assert "<script" not in row and "&lt;script&gt;" in row


def test_checkpoint_rows_show_size_and_seconds_or_a_dash() -> None:
    timezone.activate("UTC")
    saved = checkpoint_row(Checkpoint(50, "gs://b/s", 1, T, {"bytes": 2048,
                                                                "seconds": 1.26}))
    assert text(saved) == "50 gs://b/s 2.0\xa0KB 1.3 1 05-01 12:30:45"
    bare = checkpoint_row(Checkpoint(0, "gs://b/z", 2, T, {}))
    assert text(bare) == "0 gs://b/z \u2013 \u2013 2 05-01 12:30:45"
