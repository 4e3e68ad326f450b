"""The log follower on Cloud Logging's real read quota: list calls per minute and entries per
second delivered into PostgreSQL, with 1, 10, 100 and 500 running jobs.

    python -m bench.follower_quota [--jobs 1,10,100,500] [--seconds 75] [--rate 1.0]
                                   [--backlog 60000] [--tail] [--no-live]

The emulator (python -m localvertex) runs with --logging-quota-per-minute 60, Cloud Logging's
limit, and refuses the 61st call of any minute with RESOURCE_EXHAUSTED. The follower runs as
the beat runs it: one sweep every 3 s, in this process, with its default budget (58 calls a
minute, bursts of 8) on a scratch PostgreSQL database (see bench.logs_ingest).

live     every job prints --rate lines a second (timestamped as printed) for --seconds; the
         figures: list calls in the busiest 60 s, entries/s stored, entries still unread when
         the writers stop, RESOURCE_EXHAUSTED answers (must be 0).
backlog  --backlog entries already written across the jobs (a follower coming back after an
         outage): how fast the follower drains them, beside the quota's ceiling of 1000
         entries/s (60 calls a minute of 1000 entries), and how full its pages are.
--tail   adds a run of the largest job count with TailLogEntries for fresh entries.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.logs_ingest import make_jobs, postgres_version, scratch_database
from bench.machine import machine

QUOTA = 60
SWEEP_S = 3.0
# What the quota lets anyone read: 60 calls a minute of 1000 entries each.
CEILING = QUOTA * 1000 / 60


# Each emulator's token (localvertex/auth.py) by its address: what its callers send.
_TOKENS: dict[str, str] = {}


def token_for(address: str) -> str:
    return _TOKENS[address]


@contextlib.contextmanager
def emulator(quota: int = QUOTA) -> Iterator[str]:
    """python -m localvertex on a free port with its own data directory; its address."""
    from localvertex import auth
    from localvertex.client import wait_ready

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = Path(tempfile.mkdtemp(prefix="bench-lv-"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "localvertex", "--port", str(port), "--admin-port", "0",
         "--data-dir", str(data), "--logging-quota-per-minute", str(quota),
         "--log-level", "WARNING", "--accept-job-log-writes"],
        start_new_session=True)
    try:
        wait_ready(f"127.0.0.1:{port}", timeout=60)
        _TOKENS[f"127.0.0.1:{port}"] = auth.read(data / auth.TOKEN_FILE)
        yield f"127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(data, ignore_errors=True)


class Counted:
    """The real backend, noting the moment of every entries.list call."""

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self.project = backend.project
        self.supports_tail = backend.supports_tail
        self.calls: list[float] = []
        self.sizes: list[int] = []      # entries on each page
        self.latency: list[float] = []  # seconds each call took

    def list_log_entries(self, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        self.calls.append(started)
        page = self.backend.list_log_entries(*args, **kwargs)
        self.latency.append(time.monotonic() - started)
        self.sizes.append(len(page.entries))
        return page

    def tail_log_entries(self, *args: Any, **kwargs: Any) -> Any:
        return self.backend.tail_log_entries(*args, **kwargs)


def use_emulator(address: str, project: str = "bench-project") -> Any:
    from django.conf import settings

    from controlplane.backends.base import get_backend

    settings.VERTEX_EMULATOR_ADDR = address
    settings.VERTEX_EMULATOR_TOKEN = token_for(address)
    settings.VERTEX_PROJECT = project
    settings.CP_BACKEND = "controlplane.backends.training.VertexBackend"
    get_backend.cache_clear()
    return get_backend()


class Writer:
    """Writes entries for the given CustomJob ids, as replicas printing would."""

    def __init__(self, address: str, project: str = "bench-project") -> None:
        from google.cloud.logging_v2.types import LogEntry, WriteLogEntriesRequest

        from localvertex.client import logging_client

        self.client = logging_client(address, token_for(address))
        self.project = project
        self.entry_pb = LogEntry.pb()
        self.request_pb = WriteLogEntriesRequest.pb()
        self.written = 0
        self._seq = 0

    def write(self, job_ids: list[str], at: datetime, text: str = "line") -> None:
        entries = []
        for job_id in job_ids:
            self._seq += 1
            e = self.entry_pb()
            e.log_name = f"projects/{self.project}/logs/workerpool0-0"
            e.resource.type = "ml_job"
            e.resource.labels["job_id"] = job_id
            e.resource.labels["task_name"] = "workerpool0-0"
            e.timestamp.FromDatetime(at.astimezone(UTC).replace(tzinfo=None))
            e.insert_id = f"w{self._seq:012d}"
            e.severity = 200
            e.text_payload = f"{text} {self._seq} step time 0.081 s, tokens/s 51234"
            entries.append(e)
        for start in range(0, len(entries), 5000):
            batch = entries[start:start + 5000]
            self.client.write_log_entries(request=self.request_pb(entries=batch))
        self.written += len(entries)


@dataclass
class Run:
    label: str
    jobs: int
    seconds: float = 0.0
    written: int = 0
    stored: int = 0
    calls: list[float] | None = None
    sizes: list[int] | None = None
    latency: list[float] | None = None
    quota_errors: int = 0
    unread_at_stop: int = 0

    @property
    def busiest_minute(self) -> int:
        times = sorted(self.calls or [])
        return max((sum(1 for t in times if s <= t < s + 60) for s in times), default=0)


def lines() -> int:
    from controlplane.logs.models import LogLine

    return LogLine.objects.count()


def follow_loop(backend: Any, config: Any, run: Run, stop: threading.Event) -> None:
    from django.db import connections

    from controlplane.logs import follower

    counted = Counted(backend)
    run.calls, run.sizes, run.latency = counted.calls, counted.sizes, counted.latency
    try:
        while not stop.is_set():
            started = time.monotonic()
            stats = follower.follow(counted, config)  # type: ignore[arg-type]
            run.quota_errors += stats.quota_errors
            stop.wait(max(0.0, SWEEP_S - (time.monotonic() - started)))
    finally:
        connections.close_all()


def reset() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        # Not the read budget: the project's quota remembers the previous run's calls too.
        cursor.execute("TRUNCATE jobs_job, jobs_team CASCADE")


def live(address: str, jobs: int, seconds: float, rate: float, tail: bool = False) -> Run:
    from controlplane.logs import tail as tailing
    from controlplane.logs.options import follow_config

    reset()
    backend = use_emulator(address)
    attempts = make_jobs(jobs)
    ids = [a.vertex_job_id for a in attempts]
    config = replace(follow_config(), tail=tail)
    run = Run(f"live{' + tail' if tail else ''}", jobs)
    writer = Writer(address)
    stop = threading.Event()
    loop = threading.Thread(target=follow_loop, args=(backend, config, run, stop))
    streaming = None
    if tail:
        from controlplane.logs import follower

        streaming = threading.Thread(target=tailing.run, args=(
            backend, config, lambda: follower.followed_targets(backend.project, config), stop))
        streaming.start()
        time.sleep(2)
    loop.start()
    started = time.monotonic()
    owed = 0.0
    while time.monotonic() - started < seconds:
        time.sleep(0.5)
        owed += 0.5 * rate
        whole = int(owed)
        owed -= whole
        for _ in range(whole):
            writer.write(ids, datetime.now(UTC))
    run.seconds = time.monotonic() - started
    run.written = writer.written
    run.unread_at_stop = writer.written - lines()
    stop.set()
    loop.join()
    if streaming is not None:
        streaming.join()
    run.stored = lines()
    return run


def backlog(address: str, jobs: int, count: int) -> Run:
    from controlplane.logs.options import follow_config

    reset()
    backend = use_emulator(address)
    start = datetime.now(UTC) - timedelta(minutes=10)
    attempts = make_jobs(jobs, created=start - timedelta(minutes=1))
    ids = [a.vertex_job_id for a in attempts]
    writer = Writer(address)
    per_job = max(1, count // jobs)
    for n in range(per_job):
        writer.write(ids, start + timedelta(milliseconds=n * 5))
    run = Run("backlog", jobs, written=writer.written)
    stop = threading.Event()
    loop = threading.Thread(target=follow_loop, args=(backend, follow_config(), run, stop))
    started = time.monotonic()
    loop.start()
    while lines() < writer.written and time.monotonic() - started < 600:
        time.sleep(0.5)
    run.seconds = time.monotonic() - started
    stop.set()
    loop.join()
    run.stored = lines()
    return run


def report(run: Run) -> None:
    rate = run.stored / run.seconds if run.seconds else 0.0
    calls = len(run.sizes or [])
    extra = (f", unread when writers stopped {run.unread_at_stop}" if run.label != "backlog"
             else f", drained in {run.seconds:.0f} s ({rate / CEILING:.2f}x the ceiling of "
                  f"{CEILING:,.0f} entries/s); {sum(run.sizes or []) / max(1, calls):,.0f} "
                  f"entries a call, a call answered in "
                  f"{sum(run.latency or []) / max(1, calls):.2f} s on average; pages: "
                  f"{sum(1 for n in run.sizes or [] if n >= 1000)} full, "
                  f"{sum(1 for n in run.sizes or [] if 0 < n < 1000)} partial, "
                  f"{sum(1 for n in run.sizes or [] if n == 0)} empty")
    print(f"  {run.label:<12} {run.jobs:>4} jobs: {run.busiest_minute:>3} list calls in the "
          f"busiest minute, {len(run.calls or [])} in {run.seconds:.0f} s; "
          f"{run.stored}/{run.written} entries stored, {rate:,.0f} entries/s{extra}; "
          f"RESOURCE_EXHAUSTED {run.quota_errors}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default="1,10,100,500")
    parser.add_argument("--seconds", type=float, default=75.0)
    parser.add_argument("--rate", type=float, default=1.0, help="lines per second per job")
    parser.add_argument("--backlog", type=int, default=60_000)
    parser.add_argument("--tail", action="store_true")
    parser.add_argument("--no-live", action="store_true", help="only the backlog run")
    args = parser.parse_args()
    counts = [int(n) for n in args.jobs.split(",")]
    with scratch_database("quota"), emulator() as address:
        from controlplane.logs.options import follow_config

        config = follow_config()
        print(f"machine: {machine()}; {postgres_version()}; emulator quota {QUOTA} "
              f"entries.list calls/min; follower budget {config.reads_per_minute}/min (bursts "
              f"of {config.burst}), a sweep every {SWEEP_S:.0f} s")
        print(f"live: every job prints {args.rate:g} line/s for {args.seconds:.0f} s")
        for count in counts if not args.no_live else []:
            report(live(address, count, args.seconds, args.rate))
        if args.tail:
            report(live(address, counts[-1], args.seconds, args.rate, tail=True))
        if args.backlog:
            print(f"backlog: {args.backlog} entries written before the follower starts")
            report(backlog(address, counts[-1], args.backlog))
    return 0


if __name__ == "__main__":
    sys.exit(main())
