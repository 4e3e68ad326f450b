"""What one reconcile sweep asks Vertex, by listing (controlplane/runs/reconcile.py) and as the
per-job loop did (a GetCustomJob per unfinished job), for N unfinished jobs of which a share
ended since the last sweep: calls, seconds, and calls a minute at the beat's 5 s sweep beside
Vertex's quota of 600 resource management requests a minute per region (VERTEX_FACTS.md A1).

    python -m bench.reconcile_listing [--jobs 100,1000,10000] [--ended 0.1]

The emulator runs in this process (localvertex.server.Emulator, no request quota, a scratch
data directory); the jobs are written into its store as its runner writes them, with no
replica processes. Both reads go through the control plane's real backend (Google's client
over gRPC on the loopback), so the seconds are the emulator's and the client's, not Vertex's
(whose calls take tens of milliseconds each); the calls are what Vertex would be asked.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

SWEEP_S = 5.0
QUOTA_PER_MINUTE = 600
PROJECT = "bench-project"
REGION = "us-central1"


def _setup() -> None:
    # As bench.logs_ingest: the development settings (the bench keeps no secret).
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.reconcile_listing")
    parser.add_argument("--jobs", default="100,1000,10000")
    parser.add_argument("--ended", type=float, default=0.1,
                        help="the share of the jobs that ended since the last sweep")
    args = parser.parse_args(argv)
    _setup()
    from django.conf import settings

    from bench.machine import machine
    from bench.reconcile_sweep import emulator_for_the_backend
    from controlplane.backends.training import VertexBackend
    from controlplane.runs import reconcile

    calls: Counter[str] = Counter()

    class Counting(VertexBackend):
        def _call(self, what: str, fn: Callable[..., Any], **kwargs: Any) -> Any:
            calls[what] += 1
            return super()._call(what, fn, **kwargs)

    with emulator_for_the_backend() as emulator:
        print(f"machine: {machine()}")
        print(f"{'jobs':>6} {'ended':>6} | {'listing calls':>13} {'s':>6} | "
              f"{'per-job calls':>13} {'s':>6} | calls/min at {SWEEP_S:.0f} s sweeps: "
              f"listing, per-job (quota {QUOTA_PER_MINUTE})")
        for n in [int(x) for x in args.jobs.split(",")]:
            # A project of its own for each row: no other row's jobs on its pages.
            settings.VERTEX_PROJECT = project = f"{PROJECT}-{n}"
            backend = Counting()
            reconcile.get_backend = lambda b=backend: b  # type: ignore[misc]  # calls counted
            targets = _jobs(emulator, project, n, args.ended)
            calls.clear()
            started = time.perf_counter()
            listing = reconcile.read(targets)
            listed_s = time.perf_counter() - started
            listed_calls = sum(calls.values())
            assert len(listing.found) == n, (len(listing.found), n)
            calls.clear()
            started = time.perf_counter()
            for target in targets:
                backend.get_custom_job(target.name)
            got_s = time.perf_counter() - started
            got_calls = sum(calls.values())
            ended = round(n * args.ended)
            per_minute = 60 / SWEEP_S
            print(f"{n:>6} {ended:>6} | {listed_calls:>13} {listed_s:>6.2f} | "
                  f"{got_calls:>13} {got_s:>6.2f} | {listed_calls * per_minute:>6.0f}, "
                  f"{got_calls * per_minute:>6.0f} ({got_calls / listed_calls:.0f}x fewer; "
                  f"expected {_expected(n, ended, reconcile.PAGE_SIZE)} listing calls)")


def _expected(n: int, ended: int, page: int) -> int:
    running = n - ended
    return max(math.ceil(running / page), 1) + (math.ceil(ended / page) if ended else 0)


def _jobs(emulator: Any, project: str, n: int, ended_share: float) -> list[Any]:
    """N of the control plane's CustomJobs, the first ENDED_SHARE of them ended: the sweep's
    targets (each an unfinished job's current attempt, as the database says)."""
    from google.cloud import aiplatform_v1

    from contract import labels as contract_labels
    from controlplane.runs.reconcile import Target
    from localvertex.core.timeutil import to_timestamp
    from localvertex.jobs.store import JobRecord

    created = datetime.now(UTC) - timedelta(hours=1)
    stamp = to_timestamp(int(created.timestamp()) * 1_000_000_000)
    ended = round(n * ended_share)
    targets = []
    for i in range(n):
        record_id = emulator.jobs.new_id()
        job_id = i + 1
        message = aiplatform_v1.CustomJob.pb()(
            name=f"projects/{project}/locations/{REGION}/customJobs/{record_id}",
            display_name=contract_labels.job_display_name(job_id, 1),
            labels=contract_labels.attempt_labels(job_id, 1, "bench"),
            state=(aiplatform_v1.JobState.JOB_STATE_SUCCEEDED if i < ended
                   else aiplatform_v1.JobState.JOB_STATE_RUNNING).value)
        message.create_time.CopyFrom(stamp)
        message.update_time.CopyFrom(stamp)
        emulator.jobs.insert(JobRecord(id=record_id, project=project, location=REGION,
                                       job=message))
        targets.append(Target(job_id, "", message.name, created))
    return targets


if __name__ == "__main__":
    main()
