"""How long one reconcile sweep takes over N running jobs whose CustomJobs did not move (a
fleet's steady state), beside the sweep's budget and the beat's interval: whether 10,000
running jobs are each seen every sweep.

    python -m bench.reconcile_sweep [--jobs 500,2000,10000] [--steps 20] [--sweeps 3] [--burst]

A scratch PostgreSQL database (bench.logs_ingest) and the emulator in this process
(localvertex.server.Emulator, no request quota, no replicas) holding the jobs' CustomJobs,
RUNNING. Each job is made as a submission leaves it (one job composed, validated and priced
through controlplane.compose, its request, CustomJob and price snapshot copied to the others)
and then as the follower leaves a running job: `--steps` step rows, the newest a few seconds
old. The first sweep records each job's restart fingerprint; the next `--sweeps` are timed,
through the control plane's real code (controlplane/runs/reconcile.py: the listing over
Google's client, the pages' reads, restart detection, health and cost for each page).

Printed per N: the sweep's seconds (best of the timed sweeps) split by phase, the jobs the
sweep reached (all N, or the budget cut it short), and the ratios to the budget
(reconcile.SWEEP_BUDGET_S, 20 s) and to the beat's interval (CP_RECONCILE_INTERVAL_S, 5 s):
below 1 of the interval, every job is seen at every sweep. The last line reads `N jobs: X s a
sweep (R x the 5 s interval, Q x the 20 s budget)` for the largest N.

With --burst, the sweep that finds N jobs started at once instead (a fleet's start: each row
QUEUED as its submission left it, its CustomJob RUNNING since a moment ago), one sweep a size,
split by phase with the moved jobs' recording (`moves`): what the burst's rows wait for on the
stack (bench.scale's "burst"), beyond the beat's interval.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.logs_ingest import postgres_version, scratch_database
from bench.machine import machine

PROJECT = "bench-sweep"
REGION = "us-central1"
INTERVAL_S = 5.0
STEP_S = 10.0
ONE_BY_ONE = "one by one"


class Phases:
    """Seconds spent in each wrapped function, by name, and its calls, over a sweep."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._originals: list[tuple[Any, str, Any]] = []

    def wrap(self, module: Any, name: str, label: str) -> None:
        original = getattr(module, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[label] += time.perf_counter() - started
                self.calls[label] += 1

        self._originals.append((module, name, original))
        setattr(module, name, timed)

    def restore(self) -> None:
        """The wrapped functions as they were."""
        while self._originals:
            module, name, original = self._originals.pop()
            setattr(module, name, original)


def template_job(team: Any, user: Any) -> Any:
    """One job as a submission records it: composed, validated and priced (its submission
    not queued: the control plane's own queue holds it)."""
    from django.test import override_settings

    from controlplane.compose import submission, validation

    body = {"name": "sweep", "chief": {"machine_type": "n1-standard-8"},
            "workers": {"replica_count": 3}}
    checked = validation.check(validation.read_request(body), team)
    assert checked.ok, checked.errors
    with override_settings(CP_ADMISSION=True):
        return submission.create_job(team=team, user=user, checked=checked)


def running_jobs(emulator: Any, project: str, template: Any, n: int, steps: int,
                 burst: bool = False) -> list[int]:
    """N RUNNING jobs in the database and their RUNNING CustomJobs in the emulator's store.
    BURST: the jobs' rows QUEUED with no step yet, as before their CustomJobs started."""
    from google.cloud import aiplatform_v1

    from contract import labels as contract_labels
    from controlplane.logs.models import StepMetric
    from controlplane.runs.models import Job, JobAttempt, JobState
    from localvertex.core.timeutil import to_timestamp
    from localvertex.jobs.store import JobRecord

    now = datetime.now(UTC)
    started = now - timedelta(seconds=2) if burst else now - timedelta(hours=2)
    seen = None if burst else started
    steps = 0 if burst else steps
    copied = ("team", "created_by", "request", "custom_job", "region", "price_snapshot",
              "estimate_micros", "estimate_hours", "recovery_strategy", "max_recoveries",
              "recovery_options", "priority")
    jobs = Job.objects.bulk_create(
        [Job(**{field: getattr(template, field) for field in copied}, name=f"sweep-{i}",
             project=project, state=JobState.QUEUED if burst else JobState.RUNNING,
             created_at=started, started_at=seen, attempt=1) for i in range(n)],
        batch_size=2000)
    attempts = []
    stamp = to_timestamp(int(started.timestamp()) * 1_000_000_000)
    for job in jobs:
        record_id = emulator.jobs.new_id()
        message = aiplatform_v1.CustomJob.pb()(
            name=f"projects/{project}/locations/{REGION}/customJobs/{record_id}",
            display_name=contract_labels.job_display_name(job.pk, 1),
            labels=contract_labels.attempt_labels(job.pk, 1, template.team.slug),
            state=aiplatform_v1.JobState.JOB_STATE_RUNNING.value)
        for field in ("create_time", "update_time", "start_time"):
            getattr(message, field).CopyFrom(stamp)
        emulator.jobs.insert(JobRecord(id=record_id, project=project, location=REGION,
                                       job=message))
        attempts.append(JobAttempt(
            job=job, number=1, display_name=message.display_name, vertex_name=message.name,
            vertex_job_id=record_id, region=REGION, scheduling="STANDARD", created_at=started,
            vertex_state="JOB_STATE_QUEUED" if burst else "JOB_STATE_RUNNING",
            submitted_at=started, started_at=seen))
    JobAttempt.objects.bulk_create(attempts, batch_size=2000)
    StepMetric.objects.bulk_create(
        [StepMetric(job=job, attempt=1, step=s, loss=1.0 / s, step_time_s=STEP_S,
                    timestamp=now - timedelta(seconds=STEP_S * (steps - s) + 3),
                    insert_id=f"{job.pk}-{s}")
         for job in jobs for s in range(1, steps + 1)], batch_size=5000)
    return [job.pk for job in jobs]


@contextmanager
def emulator_for_the_backend() -> Iterator[Any]:
    """The emulator in this process, the control plane's backend pointed at it."""
    from django.conf import settings

    from controlplane.backends import base
    from localvertex.config import Settings
    from localvertex.server import Emulator

    data = Path(tempfile.mkdtemp(prefix="bench-sweep-"))
    emulator = Emulator(Settings(data_dir=data, port=0, replica_user="",
                                 crud_quota_per_minute=0))
    emulator.start()
    try:
        settings.VERTEX_EMULATOR_ADDR = emulator.address
        settings.VERTEX_EMULATOR_TOKEN = emulator.token
        settings.VERTEX_REGION = REGION
        settings.CP_BACKEND = "controlplane.backends.training.VertexBackend"
        base.get_backend.cache_clear()
        yield emulator
    finally:
        emulator.stop()
        shutil.rmtree(data, ignore_errors=True)


def wrap_phases() -> Phases:
    """The sweep's phases timed: its reads, the page's receivers, and the per-job path (a job
    whose CustomJob moved, or that the page could not hand on together)."""
    from controlplane.costs import spend
    from controlplane.logs import health, restarts
    from controlplane.runs import lifecycle, reconcile

    phases = Phases()
    for module, name, label in (
            (reconcile, "unfinished", "unfinished jobs"), (reconcile, "read", "listing"),
            (restarts, "refresh_many", "restarts"), (health, "check_many", "health"),
            (spend, "refresh_together", "cost"), (reconcile, "_record_moves", "moves"),
            (lifecycle, "reconcile", ONE_BY_ONE)):
        phases.wrap(module, name, label)
    return phases


def timed_sweeps(count: int, phases: Phases) -> tuple[list[float], list[int], dict[str, float]]:
    """COUNT sweeps: each one's seconds and jobs reached, and the phases of the fastest."""
    from controlplane.runs import reconcile

    seconds, reached, best = [], [], {}
    for _ in range(count):
        phases.seconds.clear()
        phases.calls.clear()
        started = time.perf_counter()
        reached.append(reconcile.sweep())
        seconds.append(time.perf_counter() - started)
        if seconds[-1] == min(seconds):
            best = dict(phases.seconds)
        if phases.calls[ONE_BY_ONE]:
            # A steady fleet goes by the page: a job reconciled alone means the bench measured
            # another path than the one it names.
            raise RuntimeError(f"{phases.calls[ONE_BY_ONE]} jobs were reconciled one by one")
    return seconds, reached, best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.reconcile_sweep")
    parser.add_argument("--jobs", default="500,2000,10000")
    parser.add_argument("--steps", type=int, default=20, help="step rows a job (default 20)")
    parser.add_argument("--sweeps", type=int, default=3, help="sweeps timed (default 3)")
    parser.add_argument("--burst", action="store_true",
                        help="time the one sweep that finds the N jobs started at once")
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.jobs.split(",")]
    if min(sizes) < 1 or args.steps < 1 or args.sweeps < 1:
        parser.error("--jobs, --steps and --sweeps must be positive")

    with scratch_database("sweep"), emulator_for_the_backend() as emulator:
        from django.conf import settings
        from django.contrib.auth import get_user_model

        from controlplane.backends import base
        from controlplane.runs import reconcile
        from controlplane.runs.models import Job
        from controlplane.teams.models import Membership, Role, Team

        phases = wrap_phases()
        team = Team.objects.create(name="Sweep", slug="sweep")
        user = get_user_model().objects.create(username="sweep")
        Membership.objects.create(user=user, team=team, role=Role.MEMBER)
        template = template_job(team, user)
        budget = reconcile.SWEEP_BUDGET_S
        print(f"machine: {machine()}, {postgres_version()}")
        print(("jobs started at once: the one sweep that finds them; " if args.burst else
               f"{args.steps} step rows a job, best of {args.sweeps} sweeps after a first; ")
              + f"budget {budget:g} s, beat interval {INTERVAL_S:g} s")
        header = (f"{'jobs':>6} {'sweep s':>8} {'reached':>8} {'/interval':>9} "
                  f"{'/budget':>8} | phases, s")
        print(header)
        last = ""
        for n in sizes:
            Job.objects.all().delete()
            # A project of its own for each size: no other size's CustomJobs on its pages.
            settings.VERTEX_PROJECT = project = f"{PROJECT}-{n}"
            base.get_backend.cache_clear()
            running_jobs(emulator, project, template, n, args.steps, burst=args.burst)
            if not args.burst:
                reconcile.sweep()  # the first look at a job records its restart fingerprint
            seconds, reached, split = timed_sweeps(1 if args.burst else args.sweeps, phases)
            best = min(seconds)
            # (no job went one by one: timed_sweeps stops the bench if one does)
            split["the rest"] = best - sum(split.values())
            print(f"{n:>6} {best:>8.2f} {min(reached):>8} {best / INTERVAL_S:>9.2f} "
                  f"{best / budget:>8.2f} | " + ", ".join(
                      f"{label} {s:.2f}" for label, s in split.items())
                  + f" (median sweep {statistics.median(seconds):.2f} s)")
            if min(reached) < n:
                print(f"  the budget cut a sweep short: {min(reached)} of {n} jobs reached")
            last = (f"{n} jobs{' started at once' if args.burst else ''}: {best:.2f} s a "
                    f"sweep ({best / INTERVAL_S:.2f} x the {INTERVAL_S:g} s interval, "
                    f"{best / budget:.2f} x the {budget:g} s budget)")
        print(last)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
