"""The emulator's side of bench.scale: the emulator as a child process that counts its calls by
method and its refusals by code, and the synthetic jobs written as a submit leaves them (in the
emulator's store and the control plane's database, so N creates do not spend the quota)."""

from __future__ import annotations

import contextlib
import json
import math
import random
import threading
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

PROJECT = "bench-scale"
REGION = "us-central1"
# The shares of the jobs that end inside the window, are preempted once, fail once.
ENDS, PREEMPTED, FAILS = 0.20, 0.05, 0.02
# Steps of a job that runs past the window.
LONG = 1_000_000
# --- the emulator, counting its calls (a child process) -------------------------------------

def emulator_child(counts_path: str, argv: list[str]) -> None:
    """python -m localvertex ARGV, noting every call by method and every refusal by code in
    COUNTS_PATH (JSON, rewritten each second)."""
    import localvertex.replicas.fork_safety  # noqa: F401  (before gRPC loads)
    from localvertex import __main__ as localvertex_main
    from localvertex import server
    from localvertex.admin.faults import FaultInjector

    calls: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    lock = threading.Lock()
    check, abort = FaultInjector.check, server._abort

    def counted_check(self: Any, method: str) -> None:
        with lock:
            calls[method] += 1
        check(self, method)

    def counted_abort(context: Any, exc: Any) -> None:
        with lock:
            refused[exc.code.name] += 1
        abort(context, exc)

    FaultInjector.check = counted_check  # type: ignore[method-assign]
    server._abort = counted_abort

    def write() -> None:
        while True:
            with lock:
                text = json.dumps({"t": time.time(), "calls": calls, "refused": refused})
            partial = Path(counts_path + ".partial")
            partial.write_text(text)
            partial.replace(counts_path)
            time.sleep(1.0)

    threading.Thread(target=write, daemon=True).start()
    localvertex_main.main(argv)


def read_counts(path: Path) -> dict[str, Any]:
    with contextlib.suppress(OSError, ValueError):
        return json.loads(path.read_text())
    return {"t": time.time(), "calls": {}, "refused": {}}


# --- the jobs, written as a submit leaves them -----------------------------------------------

def schedule_text(rng: random.Random, after_s: float, window_s: float, step_s: float) -> str:
    """A synthetic schedule (localvertex/jobs/synthetic_schedule.py) for one job: its changes
    fall AFTER_S plus a share of WINDOW_S after it starts."""
    def step_at(low: float, high: float) -> int:
        return max(1, math.ceil((after_s + rng.uniform(low, high) * window_s) / step_s))

    draw = rng.random()
    if draw < ENDS:
        return f"steps={step_at(0.0, 0.9)};step_s={step_s:g}"
    if draw < ENDS + PREEMPTED:
        return f"steps={LONG};step_s={step_s:g};preempt_at={step_at(0.0, 0.9)}"
    if draw < ENDS + PREEMPTED + FAILS:
        return f"steps={LONG};step_s={step_s:g};fail_at={step_at(0.0, 0.9)};fails=1"
    return f"steps={LONG};step_s={step_s:g}"


def write_custom_jobs(emulator_db: Path, job_pks: list[int], team: str,
                      schedules: list[str]) -> list[tuple[str, str]]:
    """QUEUED CustomJobs in the emulator's store, one per control-plane job id, with its labels
    and display name as a submit gives them and its synthetic schedule; (id, name) of each."""
    from google.cloud import aiplatform_v1

    from contract import labels as contract_labels
    from localvertex.core.timeutil import to_timestamp
    from localvertex.jobs.store import JobRecord, JobStore
    from localvertex.jobs.synthetic_schedule import ENV_NAME

    store = JobStore(emulator_db)
    stamp = to_timestamp(time.time_ns())
    written = []
    for pk, schedule in zip(job_pks, schedules, strict=True):
        record_id = store.new_id()
        name = f"projects/{PROJECT}/locations/{REGION}/customJobs/{record_id}"
        message = aiplatform_v1.CustomJob.pb()(
            name=name, display_name=contract_labels.job_display_name(pk, 1),
            labels=contract_labels.attempt_labels(pk, 1, team),
            state=aiplatform_v1.JobState.JOB_STATE_QUEUED.value)
        pool = message.job_spec.worker_pool_specs.add()
        pool.machine_spec.machine_type = "n1-standard-4"
        pool.replica_count = 1
        pool.container_spec.image_uri = "us-docker.pkg.dev/bench/synthetic:1"
        pool.container_spec.command.append("/synthetic")
        pool.container_spec.env.add(name=ENV_NAME, value=schedule)
        message.create_time.CopyFrom(stamp)
        message.update_time.CopyFrom(stamp)
        store.insert(JobRecord(id=record_id, project=PROJECT, location=REGION, job=message))
        written.append((record_id, name))
    return written


def write_jobs(emulator_db: Path, n: int, after_s: float, window_s: float, step_s: float,
               seed: int) -> None:
    """N QUEUED CustomJobs in the emulator's store and N QUEUED Jobs in the database."""
    from django.contrib.auth import get_user_model

    from controlplane.runs.models import Job, JobAttempt, JobState
    from controlplane.teams.models import Membership, Role, Team

    team, _ = Team.objects.get_or_create(name="Scale", slug="scale")
    user, _ = get_user_model().objects.get_or_create(username="scale")
    Membership.objects.get_or_create(user=user, team=team, defaults={"role": Role.MEMBER})
    now = datetime.now(UTC)
    jobs = Job.objects.bulk_create(
        [Job(team=team, created_by=user, name=f"synthetic-{i}", request={}, custom_job={},
             project=PROJECT, region=REGION, state=JobState.QUEUED, created_at=now)
         for i in range(n)], batch_size=1000)
    rng = random.Random(seed)
    written = write_custom_jobs(emulator_db, [job.pk for job in jobs], team.slug,
                                [schedule_text(rng, after_s, window_s, step_s) for _ in jobs])
    JobAttempt.objects.bulk_create(
        [JobAttempt(job=job, number=1, display_name=f"cp-{job.pk}-a1", vertex_name=name,
                    vertex_job_id=record_id, vertex_state="JOB_STATE_QUEUED", region=REGION,
                    created_at=now, submitted_at=now)
         for job, (record_id, name) in zip(jobs, written, strict=True)], batch_size=1000)
