"""The hot fragments of the pages, rendered in-process: the job list's rows, the job page's
timeline items and checkpoint rows, and the log panel's lines.

    python -m bench.page_fragments [--rounds 200] [--dump PATH]

Each fragment is drawn by the template tag the pages call (`job_rows`, `timeline_items`,
`checkpoint_rows`, `log_lines`) from objects built in memory (no database: what is timed is
the writing of the HTML, not the queries), as a reader in Europe/Paris sees them. Figures are
the best of --rounds renders, per page drawn and per item. The inputs take every branch of the
markup (each kind of event, a failure with its diagnosis, a job waiting for quota, values with
markup in them); `--dump PATH` writes the HTML of one render of each, with the clock fixed, so
two versions of the code can be compared byte for byte.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from unittest import mock

T = datetime(2026, 5, 1, 12, 30, 45, 123456, tzinfo=UTC)
HOSTILE = '<b>"x" & \'y\'</b>'
ROWS, ITEMS, CHECKPOINTS, LINES = 50, 100, 50, 200


def _jobs() -> list[Any]:
    from django.contrib.auth.models import User

    from controlplane.runs.models import Job, JobState
    from controlplane.teams.models import Team

    team, user = Team(pk=1, name="Vision & co", slug="vision"), User(pk=1, username="ann")
    pool = {"machineSpec": {"machineType": "a2-highgpu-1g", "acceleratorType": "NVIDIA_TESLA_A100",
                            "acceleratorCount": 1}, "replicaCount": "2"}
    custom_job = {"jobSpec": {"workerPoolSpecs": [pool, {}, pool]}}
    jobs = []
    for n in range(ROWS):
        kind = n % 5
        job = Job(pk=1000 + n, team=team, created_by=user, name=f"exp-{n}" + HOSTILE * (n == 3),
                  custom_job=custom_job, created_at=T - timedelta(hours=n), attempt=1,
                  restarts=n % 3, cost_micros=1_234_567 * n, lost_micros=420_000 * (n % 4 == 1))
        if kind == 0:
            job.state, job.started_at = JobState.RUNNING, T - timedelta(minutes=n)
            job.last_step, job.total_steps, job.last_loss = 10 * n, 1000, 2.5 / (n + 1)
        elif kind == 1:
            job.state, job.started_at = JobState.FAILED, T - timedelta(hours=n, minutes=30)
            job.ended_at, job.error_message = T, f"replica exited {HOSTILE} " + "x" * 200
            if n % 2:
                job.diagnosis = {"title": "Out of memory", "summary": "CUDA out of memory " * 9,
                                 "fix": "Lower the batch size " * 9 + HOSTILE}
        elif kind == 2:
            job.state = JobState.WAITING_FOR_QUOTA
            job.quota_wait = ({"metric": "nvidia_a100_gpus", "region": "us-central1",
                               "limit": 8, "usage": 8, "requested": 2} if n % 2 else
                              {"region": "eu-west4"})
        elif kind == 3:
            job.state, job.started_at, job.ended_at = (JobState.SUCCEEDED, T - timedelta(days=1),
                                                       T - timedelta(hours=2))
            job.last_step, job.total_steps, job.last_loss = 1000, 1000, 0.125
        else:
            job.state, job.last_step = JobState.QUEUED, None
        jobs.append(job)
    return jobs


def _timeline() -> list[dict[str, Any]]:
    from controlplane.runs.models import JobEvent, JobRestart, RestartCause

    kinds: list[tuple[str, int | None, dict[str, Any]]] = [
        ("state", None, {"from": "PENDING", "to": "RUNNING", "source": "poll"}),
        ("state", None, {"to": "CANCELLED", "error": "cancelled by ann"}),
        ("state", None, {"from": "RUNNING", "to": "FAILED", "error": HOSTILE}),
        ("checkpoint_saved", 50, {"path": "gs://b/step-50", "bytes": 1048576, "seconds": 0.44}),
        ("checkpoint_saved", 60, {"path": "gs://b/step-60"}),
        ("checkpoint_deleted", 50, {"path": "gs://b/step-50"}),
        ("resumed", 7, {"path": "gs://p"}),
        ("preempted", None, {"signal": "SIGTERM", "checkpoint_path": "gs://c"}),
        ("preempted", 12, {}),
        ("run_started", None, {"rank": 0, "world_size": 8, "strategy": "fsdp",
                               "resumed_from_step": 40,
                               "dims": {"tensor": 2, "data": 2.0, "zz": 3}}),
        ("run_started", None, {"rank": 1, "world_size": 2}),
        ("run_finished", 100, {"final_loss": 1.23456, "wall_s": 33.6}),
        ("replica_restarted", None, {"text": HOSTILE}),
        ("eval", 10, {"metrics": {"acc": 0.5, "f1": HOSTILE}}),
        ("hosts", None, {"num_processes": 4, "source": "x", "note": HOSTILE}),
        ("recovery", None, {"recovery": 1, "max": 3, "scheduling": "SPOT", "region": "us-east1",
                            "resume_step": 40, "delay_s": 30, "why": "preempted",
                            "skipped": ["a region", HOSTILE]}),
        ("recovery", None, {"recovery": 2, "max": 3, "why": "stockout"}),
        ("recovery_refused", None, {"why": "no more tries"}),
        ("submitted", None, {"vertex_name": "projects/p/x", "scheduling": "FLEX_START",
                             "region": "eu", "resume_step": 40, "resume_path": "gs://b/40"}),
        ("submitted", None, {"vertex_name": "projects/p/y"}),
    ]
    items: list[dict[str, Any]] = []
    for n in range(ITEMS):
        at = T - timedelta(minutes=n)
        if n % 7 == 6:
            restart = JobRestart(pk=n, attempt=1 + n % 3, replica="workerpool0-1" * (n % 2),
                                 ordinal=n, cause=list(RestartCause)[n % 5], occurred_at=at,
                                 signal=("SIGTERM " + HOSTILE * 20) * (n % 3 == 0),
                                 step=None if n % 4 == 0 else n, steps_lost=(n % 3) or None)
            if n % 4 == 1:
                restart.resumed_at, restart.resumed_from_step = at, n - 5
                restart.checkpoint_id = 900 + n if n % 8 == 1 else None
            elif n % 4 == 2:
                restart.resumed_at = at
            items.append({"restart": restart})
        else:
            kind, step, data = kinds[n % len(kinds)]
            items.append({"event": JobEvent(pk=n, job_id=1, attempt=1 + n % 2, kind=kind,
                                            timestamp=at, replica="workerpool0-0" * (n % 3 > 0),
                                            step=step, data=dict(data))})
    return items


def _checkpoints() -> list[Any]:
    from controlplane.runs.checkpoints import Checkpoint

    return [Checkpoint(step=10 * n, path=f"gs://b/step-{n}" + HOSTILE * (n == 2),
                       attempt=1 + n % 2, saved_at=T - timedelta(minutes=n),
                       data={"bytes": 2048 * n, "seconds": n / 3} if n % 3 else {})
            for n in range(CHECKPOINTS)]


def _lines() -> list[Any]:
    from controlplane.logs.queries import TailLine

    return [TailLine(timestamp=T + timedelta(milliseconds=37 * n), severity=(0, 100, 200, 400,
                                                                             500, 800)[n % 6],
                     replica="workerpool0-0" * (n % 4 > 0), insert_id=f"id-{n}",
                     message=f"step {n} loss 0.{n:04d} " + HOSTILE * (n % 10 == 0))
            for n in range(LINES)]


def fragments() -> dict[str, tuple[Callable[[], str], int]]:
    """Fragment name -> (a render of it, its items)."""
    from controlplane.logs.templatetags import logs_ui
    from controlplane.runs.templatetags import jobs_ui

    jobs, timeline, checkpoints, lines = _jobs(), _timeline(), _checkpoints(), _lines()
    return {
        "job list rows": (lambda: jobs_ui.job_rows(jobs), len(jobs)),
        "timeline items": (lambda: jobs_ui.timeline_items(timeline), len(timeline)),
        "checkpoint rows": (lambda: jobs_ui.checkpoint_rows(checkpoints), len(checkpoints)),
        "log lines": (lambda: logs_ui.log_lines(lines), len(lines)),
    }


def best(render: Callable[[], str], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        render()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--dump", type=Path, default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.utils import timezone

    timezone.activate("Europe/Paris")
    drawn = fragments()
    if args.dump is not None:
        with mock.patch("django.utils.timezone.now", return_value=T):
            args.dump.write_text("".join(f"== {name}\n{render()}\n"
                                         for name, (render, _) in drawn.items()))
    print(f"{'fragment':<16} {'items':>5} {'ms a render':>12} {'us an item':>11}")
    for name, (render, items) in drawn.items():
        render()  # templates compiled, zone and URL resolvers warm
        seconds = best(render, args.rounds)
        print(f"{name:<16} {items:>5} {seconds * 1e3:>12.2f} {seconds * 1e6 / items:>11.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
