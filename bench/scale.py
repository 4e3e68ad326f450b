"""N running jobs on the local stack with the emulator in synthetic mode, with 1 and then 2
Celery workers: Vertex calls a minute by method, state-change and log-line delays.

    python -m bench.scale [--jobs 10000] [--workers 1,2] [--seconds 120] [--lines-per-s 300]
                          [--reconcile-s 5] [--follow-s 3] [--logs list|tail]

Each run is a fresh stack (config/devstack.py's commands, as the tests and `make demo` start
it) on a scratch PostgreSQL database (bench.logs_ingest) and Redis (CELERY_BROKER_URL, else
redis://127.0.0.1:6379/0): the emulator with --synthetic (localvertex/jobs/synthetic_replicas.py:
replicas are timers printing the trainers' lines), Vertex's request quota (600 a minute per
region) and Cloud Logging's read quota (60 a minute), the beat at --reconcile-s and --follow-s,
and W workers of one process each (--concurrency 1), so "2 workers" is twice the processes.
With --logs tail, fresh lines come by TailLogEntries (`manage.py follow_logs --tail`, a process
of its own, CP_LOG_TAIL on, its buffer window --tail-buffer) and the beat's sweeps only settle;
with --logs list (the default, as the compose stack runs), the sweeps read them.

The N jobs are written before the stack starts, as a submit leaves them: a QUEUED CustomJob in
the emulator's store (with the control plane's labels and a synthetic schedule) and a QUEUED
Job with its attempt in PostgreSQL; N creates would spend the quota for N/600 minutes, and the
bench measures the steady state, not the submits. The emulator starts every one at once (a
burst of N state changes), then each chief prints a step line every N / --lines-per-s seconds;
20% of the jobs end, 5% are preempted once and 2% fail once and are restarted, each at a time
drawn from the window, which begins --ends-after seconds after the start (30 s + 0.3 s a job,
the burst on this machine) or once every row has left PENDING.

Printed, for each worker count, each figure beside its goal as a ratio:
  calls/min   Vertex calls a minute by method over the window (after the burst), counted in the
              emulator, and RESOURCE_EXHAUSTED answers over the whole run (goal 0);
  state->row  a job's state change in the emulator (its start_time or end_time) to its row's
              change being visible in PostgreSQL (the bench polls every POLL_S), p95: the burst
              (every job's first RUNNING) and the steady changes (ends in the window);
              goal <= 2 reconcile intervals;
  line->page  a log line's timestamp to its row in PostgreSQL (what the job page's next read
              shows), p95; goal <= 1 s;
  throughput  state changes a second while the burst is absorbed, lines stored a second.
The machine's load average is printed beside the figures: the machine may be shared.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import re
import shutil
import signal
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from bench._scale_jobs import (
    LONG,
    PROJECT,
    REGION,
    emulator_child,
    read_counts,
    write_custom_jobs,
    write_jobs,
)

QUOTA_PER_MINUTE = 600
LINE_GOAL_S = 1.0
POLL_S = 0.5
TERMINAL = ("SUCCEEDED", "FAILED", "CANCELLED")


def emulator_only(n: int, args: argparse.Namespace) -> None:
    """The emulator alone with N synthetic jobs that run past the window: how long until every
    one is RUNNING, then over the window its entries a second, CPU, memory and threads."""
    import sqlite3

    var_dir = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    stack = scale_stack("postgres://unused/none", "redis://unused", var_dir, 0, args)
    stack.emulator_data_dir.mkdir(parents=True)
    db = stack.emulator_data_dir / "localvertex.sqlite3"
    step_s = max(n / args.lines_per_s, 0.01)
    write_custom_jobs(db, list(range(1, n + 1)), "scale", [f"steps={LONG};step_s={step_s:g}"] * n)

    def counts() -> tuple[int, int]:
        with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            running = conn.execute("SELECT count(*) FROM jobs WHERE state = 3").fetchone()[0]
            entries = conn.execute("SELECT max(id) FROM entries").fetchone()[0] or 0
        return running, entries

    with _removed(var_dir), started(stack, 0, ["emulator"]):
        pid = stack.procs["emulator"].pid
        began = time.time()
        while counts()[0] < n and time.time() - began < args.burst_timeout:
            time.sleep(1.0)
        all_running_s = time.time() - began
        _, first = counts()
        cpu_from, at = _cpu_s(pid), time.time()
        time.sleep(args.seconds)
        running, last = counts()
        cpu = (_cpu_s(pid) - cpu_from) / (time.time() - at)
        status = Path(f"/proc/{pid}/status").read_text()
        rss = int(re.search(r"VmRSS:\s+(\d+)", status)[1]) / 1024
        threads = int(re.search(r"Threads:\s+(\d+)", status)[1])
    print(f"emulator alone, {n} synthetic jobs (a step line every {step_s:g} s each, "
          f"{n / step_s:.0f} lines/s asked): every job RUNNING after {all_running_s:.0f} s "
          f"({n / all_running_s:.0f} jobs/s); then over {args.seconds:g} s: {running} RUNNING, "
          f"{(last - first) / args.seconds:.0f} entries/s stored, {cpu:.2f} CPUs, "
          f"{rss:.0f} MiB resident, {threads} threads; load average {os.getloadavg()[0]:.1f}")


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# --- the stack -------------------------------------------------------------------------------

def scale_stack(database_url: str, broker_url: str, var_dir: Path, workers: int,
                args: argparse.Namespace) -> Any:
    from config.devstack import Stack, StackConfig
    from config.ports import reserve_port

    class ScaleStack(Stack):
        """The stack's emulator counting its calls in synthetic mode, and W one-process
        workers (worker0, worker1, ...)."""

        counts = var_dir / "calls.json"

        def commands(self) -> dict[str, list[str]]:
            commands = super().commands()
            py = sys.executable
            if args.logs == "tail":
                commands["follower"] = [py, "manage.py", "follow_logs", "--tail",
                                        "--interval", str(args.follow_s)]
            emulator = commands["emulator"]
            commands["emulator"] = [
                py, "-m", "bench.scale", "--emulator-child", str(self.counts), "--",
                *emulator[3:], "--synthetic", "--log-level", "WARNING"]
            worker = commands.pop("worker")
            at = worker.index("--concurrency")
            named = worker.index("--hostname")
            for i in range(workers):
                command = list(worker)
                command[at + 1] = "1"
                command[named + 1] = f"worker{i}-{self.config.queue_prefix}@%h"
                commands[f"worker{i}"] = command
            return commands

    config = StackConfig(
        var_dir=var_dir, database_url=database_url, broker_url=broker_url,
        emulator_port=reserve_port(), web_port=reserve_port(),
        queue_prefix=f"scale-{uuid.uuid4().hex[:6]}", prepared=True,
        reconcile_interval_s=args.reconcile_s, follow_interval_s=args.follow_s,
        # The jobs' project and region (write_jobs): the control plane lists where they are.
        extra_env={"LOG_LEVEL": "WARNING", "VERTEX_PROJECT": PROJECT, "VERTEX_REGION": REGION,
                   **({"CP_LOG_TAIL": "true", "CP_LOG_TAIL_BUFFER_S": str(args.tail_buffer)}
                      if args.logs == "tail" else {})})
    return ScaleStack(config)


@contextlib.contextmanager
def started(stack: Any, workers: int, names: list[str] | None = None):
    """The stack's processes, the emulator last: its jobs start the moment it is up, so the
    workers (a Celery worker takes seconds to boot) are ready by then, as in a deployment whose
    jobs start while it runs. The burst's delays are then the control plane's, not its boot."""
    from config.devstack import wait_for_port

    names = names or ["emulator", *(f"worker{i}" for i in range(workers)), "beat"]
    others = [name for name in names if name != "emulator"]
    try:
        for name in others:
            stack.start_process(name)
        deadline = time.monotonic() + 180
        for name in others:
            while name.startswith("worker") and " ready." not in _log(stack, name):
                if time.monotonic() > deadline or stack.dead():
                    raise RuntimeError(f"{name} not ready: {stack.dead()}\n"
                                       + stack.log_tail(name))
                time.sleep(0.2)
        emulator = stack.start_process("emulator")
        wait_for_port(stack.config.emulator_port, 600, emulator)
        yield stack
    finally:
        for name in reversed(names):
            if name in stack.procs:
                stack.stop_process(name, timeout_s=60)
        stack.guard.close()


def _log(stack: Any, name: str) -> str:
    path = stack.log_dir / f"{name}.log"
    return path.read_text(errors="replace") if path.exists() else ""


# --- one run ---------------------------------------------------------------------------------

@dataclass
class Run:
    workers: int
    n: int
    load: list[float] = field(default_factory=list)
    calls_per_min: dict[str, float] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    burst: list[float] = field(default_factory=list)    # first RUNNING: seconds to the row
    steady: list[float] = field(default_factory=list)   # ends in the window
    lines: list[float] = field(default_factory=list)    # line timestamp -> stored
    burst_s: float = float("nan")                       # start to every job RUNNING in rows
    first_s: float = float("nan")                       # start to the first RUNNING row
    lines_per_s: float = 0.0
    window_s: float = 0.0
    other_changes: Counter[str] = field(default_factory=Counter)
    tasks: dict[str, list[float]] = field(default_factory=dict)


def run_once(n: int, workers: int, args: argparse.Namespace, database_url: str,
             broker_url: str) -> Run:
    from django.db import connection

    from controlplane.logs.models import LogLine
    from controlplane.runs.models import Job, JobEvent

    with connection.cursor() as cursor:  # the last run's jobs, and everything hanging on them
        cursor.execute(f"TRUNCATE {Job._meta.db_table} CASCADE")
    var_dir = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    stack = scale_stack(database_url, broker_url, var_dir, workers, args)
    stack.emulator_data_dir.mkdir(parents=True)
    step_s = max(n / args.lines_per_s, 0.01)
    after_s = args.ends_after if args.ends_after is not None else 30 + 0.3 * n
    write_jobs(stack.emulator_data_dir / "localvertex.sqlite3", n, after_s, args.seconds,
               step_s, args.seed)
    result = Run(workers=workers, n=n, load=[os.getloadavg()[0]])
    seen_event = seen_line = 0
    # The folder goes after the processes have stopped (they write to it until then).
    names = ["emulator", *(f"worker{i}" for i in range(workers)), "beat",
             *(["follower"] if args.logs == "tail" else [])]
    with _removed(var_dir), started(stack, workers, names):
        began = time.time()
        window_from: float | None = None
        window_counts: dict[str, Any] = {}
        running: set[int] = set()   # jobs whose row has left QUEUED and PENDING
        deadline = began + args.burst_timeout
        said = began
        while True:
            now = time.time()
            if window_from is None and now - said >= 15:
                print(f"  ... {len(running)} of {n} RUNNING in rows after {now - began:.0f} s",
                      flush=True)
                said = now
            for pk, job_id, at, data in JobEvent.objects.filter(
                    kind="state", pk__gt=seen_event).order_by("pk").values_list(
                    "pk", "job_id", "timestamp", "data"):
                seen_event = pk
                to = data.get("to")
                if to == "RUNNING" and job_id not in running:
                    if not running:
                        result.first_s = now - began
                    running.add(job_id)
                    result.burst.append(now - at.timestamp())
                elif to in TERMINAL and window_from is not None:
                    result.steady.append(now - at.timestamp())
                else:
                    # Ended before the window (its row never showed RUNNING: it ended between
                    # two sweeps), or a change whose time is not Vertex's (PENDING).
                    result.other_changes[to] += 1
                    if to in TERMINAL:
                        running.add(job_id)
            lines = LogLine.objects.filter(pk__gt=seen_line).order_by("pk").values_list(
                "pk", "timestamp")
            for pk, at in lines:
                seen_line = pk
                if window_from is not None:
                    result.lines.append(now - at.timestamp())
            if len(running) >= n and math.isnan(result.burst_s):
                result.burst_s = now - began
            if window_from is None and ((len(running) >= n and now - began >= after_s)
                                        or now > deadline):
                # The burst is absorbed (or given up on), and the scheduled changes are due:
                # the window starts.
                if math.isnan(result.burst_s):
                    result.burst_s = now - began
                window_from = now
                print(f"  ... window from {now - began:.0f} s", flush=True)
                window_counts = read_counts(stack.counts)
                stored_from = seen_line
            if window_from is not None and now - window_from >= args.seconds:
                break
            dead = stack.dead()
            if dead:
                raise RuntimeError(f"stack processes died: {dead}\n" + "\n".join(
                    stack.log_tail(name) for name in dead))
            time.sleep(max(0.0, POLL_S - (time.time() - now)))
        end_counts = read_counts(stack.counts)
        result.window_s = time.time() - window_from
        minutes = (end_counts["t"] - window_counts["t"]) / 60
        result.calls_per_min = {
            method: (count - window_counts["calls"].get(method, 0)) / minutes
            for method, count in end_counts["calls"].items()
            if count > window_counts["calls"].get(method, 0)}
        result.refused = dict(end_counts["refused"])
        result.lines_per_s = LogLine.objects.filter(pk__gt=stored_from).count() / \
            result.window_s
        result.load.append(os.getloadavg()[0])
        result.tasks = task_times(stack.log_dir, window_from)
    return result


@contextlib.contextmanager
def _removed(folder: Path):
    try:
        yield
    finally:
        shutil.rmtree(folder, ignore_errors=True)


_SUCCEEDED = re.compile(r"^\[(\S+ \S+): INFO/\S+\] Task ([\w.]+)\[[^\]]+\] succeeded in "
                        r"([0-9.]+)s")


def task_times(log_dir: Path, since: float) -> dict[str, list[float]]:
    """Each task's run times in the window, from the workers' logs (`Task NAME[ID] succeeded
    in Ss`)."""
    times: dict[str, list[float]] = {}
    for path in log_dir.glob("worker*.log"):
        for line in path.read_text(errors="replace").splitlines():
            m = _SUCCEEDED.match(line)
            if not m:
                continue
            at = datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f").timestamp()
            if at >= since:
                times.setdefault(m[2].rsplit(".", 1)[-1], []).append(float(m[3]))
    return times


# --- printing --------------------------------------------------------------------------------

def p95(values: list[float]) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[94]


def _spread(run: Run) -> float:
    """Seconds from the first RUNNING row to the last; a burst the database took in one poll
    (every row seen at once) counts as the poll's interval, the most it can have taken."""
    return max(run.burst_s - run.first_s, POLL_S)


def report(run: Run, args: argparse.Namespace, base: Run | None) -> None:
    goal_s = 2 * args.reconcile_s
    print(f"\n{run.workers} worker(s), {run.n} jobs; load average {run.load[0]:.1f} at start, "
          f"{run.load[-1]:.1f} at end; window {run.window_s:.0f} s after the burst")
    crud = {m: v for m, v in run.calls_per_min.items() if "LogEntries" not in m}
    total = sum(crud.values())
    print(f"  Vertex calls/min: {total:.0f} ({total / QUOTA_PER_MINUTE:.2f}x the "
          f"{QUOTA_PER_MINUTE} quota): " + ", ".join(
              f"{m} {v:.0f}" for m, v in sorted(crud.items(), key=lambda kv: -kv[1])))
    logging = {m: v for m, v in run.calls_per_min.items() if "LogEntries" in m}
    print("  Cloud Logging calls/min: " + (", ".join(
        f"{m} {v:.0f} ({v / 60:.2f}x its 60 quota)" for m, v in logging.items()) or "none"))
    exhausted = run.refused.get("RESOURCE_EXHAUSTED", 0)
    print(f"  RESOURCE_EXHAUSTED: {exhausted} (goal 0); other refusals: "
          f"{ {k: v for k, v in run.refused.items() if k != 'RESOURCE_EXHAUSTED'} or 'none'}")
    print(f"  state -> row, burst (every job's first RUNNING, {len(run.burst)}): p95 "
          f"{p95(run.burst):.1f} s ({p95(run.burst) / goal_s:.2f}x the {goal_s:g} s goal); "
          f"every row past PENDING after {run.burst_s:.0f} s, the first after {run.first_s:.0f} s "
          f"({len(run.burst) / _spread(run):.1f} changes/s between)")
    print(f"  state -> row, steady (ends in the window, {len(run.steady)}): p95 "
          f"{p95(run.steady):.1f} s ({p95(run.steady) / goal_s:.2f}x the {goal_s:g} s goal)")
    print(f"  line -> page ({len(run.lines)} lines, {run.lines_per_s:.0f}/s stored): p50 "
          f"{statistics.median(run.lines) if run.lines else float('nan'):.1f} s, p95 "
          f"{p95(run.lines):.1f} s ({p95(run.lines) / LINE_GOAL_S:.2f}x the "
          f"{LINE_GOAL_S:g} s goal)")
    busy = sorted(run.tasks.items(), key=lambda kv: -sum(kv[1]))[:4]
    print("  worker time in the window (task: runs, mean s, max s, share of the window): "
          + "; ".join(f"{name} {len(t)}, {statistics.mean(t):.2f}, {max(t):.1f}, "
                      f"{sum(t) / run.window_s:.2f}" for name, t in busy))
    if base is not None:
        rate = _spread(base) / _spread(run)
        print(f"  vs {base.workers} worker(s): burst absorbed "
              f"{rate:.2f}x as fast (goal >= 1.7x), steady p95 "
              f"{p95(run.steady) / p95(base.steady):.2f}x, line p95 "
              f"{p95(run.lines) / p95(base.lines):.2f}x (goal <= 1.0x: no worse)")


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["--emulator-child"]:
        emulator_child(argv[1], argv[3:])
        return 0
    parser = argparse.ArgumentParser(prog="python -m bench.scale",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--seconds", type=float, default=120.0,
                        help="the window measured once the start burst is absorbed")
    parser.add_argument("--lines-per-s", type=float, default=300.0,
                        help="log lines a second over all jobs (Cloud Logging's read quota "
                        "reads at most 1000)")
    parser.add_argument("--reconcile-s", type=float, default=5.0)
    parser.add_argument("--follow-s", type=float, default=3.0)
    parser.add_argument("--burst-timeout", type=float, default=900.0)
    parser.add_argument("--ends-after", type=float, default=None,
                        help="seconds after its start before a job's scheduled end, preemption "
                        "or failure (default 30 + 0.3 s a job: after the start burst)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--logs", choices=("list", "tail"), default="list",
                        help="how fresh lines are read: the beat's list sweeps (as the compose "
                        "stack runs) or a TailLogEntries follower process")
    parser.add_argument("--tail-buffer", type=float, default=0.2,
                        help="with --logs tail: TailLogEntries' buffer window, s (Cloud "
                        "Logging's default is 2)")
    parser.add_argument("--emulator-only", action="store_true",
                        help="the emulator alone with --jobs synthetic jobs: its start, "
                        "entries a second, CPU, memory and threads")
    args = parser.parse_args(argv)
    # A SIGTERM (timeout, Ctrl-C's cousin) unwinds like Ctrl-C: the stack and database go.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    from bench.logs_ingest import postgres_version, scratch_database
    from bench.machine import machine

    if args.emulator_only:
        print(f"machine: {machine()}", flush=True)
        emulator_only(args.jobs, args)
        return 0

    broker = os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/0")
    with scratch_database("scale") as url:
        print(f"machine: {machine()}; {postgres_version()}; {args.jobs} synthetic jobs, "
              f"{args.lines_per_s:g} lines/s in all (a step line every "
              f"{max(args.jobs / args.lines_per_s, 0.01):g} s a job); reconcile every "
              f"{args.reconcile_s:g} s, follow every {args.follow_s:g} s; fresh lines by "
              + ("list sweeps" if args.logs == "list" else
                 f"TailLogEntries (buffer window {args.tail_buffer:g} s)"), flush=True)
        base = None
        for workers in [int(w) for w in args.workers.split(",")]:
            run = run_once(args.jobs, workers, args, url, broker)
            report(run, args, base)
            sys.stdout.flush()
            base = base or run
    return 0


if __name__ == "__main__":
    sys.exit(main())
