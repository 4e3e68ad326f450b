"""Trainer print -> visible on the job page: p50 and p95.

    python -m bench.log_latency [--lines 100] [--every 0.5] [--modes list,tail]

A real CustomJob on the emulator (quota 60 calls/min) runs a replica that prints a probe line
every --every seconds, each holding the wall time it was printed. The follower runs as in
production (list mode: a sweep every CP_FOLLOW_INTERVAL_S = 3 s, as the beat runs it; tail
mode: TailLogEntries with a 2 s buffer window, the sweeps settling), on a scratch PostgreSQL
database. Two latencies per probe line:
  stored    print -> the line is in PostgreSQL (polled every 50 ms), i.e. what the next
            request for the page would show;
  polled    print -> the line is in the job page's log panel when the page polls (the
            fallback when its event stream is down): the panel (GET /jobs/<id>/partials/logs/,
            the real view and template) is polled every 3 s, as htmx does, starting at a
            random phase;
  streamed  print -> the line is received by a client of the job page's event stream
            (GET /jobs/<id>/events/, server-sent events, signed in as the page is), served by
            the web server the stack runs (gunicorn's ASGI worker, config/asgi.py) on the same
            database, the lines published on Redis (CP_LIVE_URL) after the store commits.
The goal is a line on the page within a second (p95 <= 1.0 s, tail mode); each p95 is printed
beside it as a ratio. Tail mode's --tail-buffer is TailLogEntries' buffer_window (Cloud
Logging's default 2 s, the follower's CP_LOG_TAIL_BUFFER_S): a line waits that long in the
service before it is sent, so it bounds what any page can show.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.follower_quota import emulator, token_for, use_emulator
from bench.logs_ingest import postgres_version, scratch_database
from bench.machine import machine

ROOT = Path(__file__).resolve().parent.parent

PAGE_POLL_S = 3.0
GOAL_S = 1.0
PROBE = re.compile(r"probe (\d+) at ([0-9.]+)")


def replica_code(lines: int, every: float) -> str:
    return (
        "import time\n"
        f"for i in range({lines}):\n"
        "    print(f'probe {i} at {time.time():.6f}', flush=True)\n"
        f"    time.sleep({every})\n"
    )


def start_job(address: str, lines: int, every: float) -> tuple[Any, str]:
    """The Job (and attempt) of a CustomJob that prints the probes; its resource name."""
    from django.contrib.auth import get_user_model
    from google.cloud import aiplatform_v1

    from controlplane.runs.models import Job, JobAttempt, JobState
    from controlplane.teams.models import Membership, Role, Team
    from localvertex.client import job_client

    team, _ = Team.objects.get_or_create(name="Bench", slug="bench")
    user, _ = get_user_model().objects.get_or_create(username="bench")
    Membership.objects.get_or_create(user=user, team=team, defaults={"role": Role.MEMBER})
    created = datetime.now(UTC)
    remote = job_client(address, token_for(address)).create_custom_job(
        parent="projects/bench-project/locations/us-central1",
        custom_job=aiplatform_v1.CustomJob(
            display_name="latency-probe",
            job_spec=aiplatform_v1.CustomJobSpec(worker_pool_specs=[{
                "machine_spec": {"machine_type": "n1-standard-4"}, "replica_count": 1,
                "container_spec": {"image_uri": "us-docker.pkg.dev/bench/probe:1",
                                   "command": [sys.executable, "-c",
                                               replica_code(lines, every)]}}])))
    job = Job.objects.create(team=team, created_by=user, name="latency-probe", request={},
                             custom_job={}, project="bench-project", region="us-central1",
                             state=JobState.RUNNING)
    JobAttempt.objects.create(job=job, number=1, display_name=f"cp-{job.pk}-a1",
                              vertex_job_id=remote.name.rsplit("/", 1)[1],
                              created_at=created - timedelta(seconds=1), submitted_at=created)
    return job, remote.name


@contextlib.contextmanager
def web_server(database_url: str) -> Iterator[str]:
    """The stack's web server (config/devstack.py's command) on the bench's database."""
    from config.devstack import Stack, StackConfig, wait_for_port
    from config.ports import reserve_port

    port = reserve_port()
    command = Stack(StackConfig(var_dir=ROOT / "var" / "bench", database_url=database_url,
                                broker_url="", web_port=port)).commands()["web"]
    command = [c for c in command if c not in ("--access-logfile", "-")]
    env = {**os.environ, "DATABASE_URL": database_url, "DEBUG": "true", "LOG_LEVEL": "WARNING"}
    server = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        wait_for_port(port, 60, server)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def read_stream(url: str, session_id: str, into: dict[int, float], printed: dict[int, float],
                stop: threading.Event) -> None:
    """The probe lines a client of the job's event stream receives, with when."""
    import requests

    with requests.get(url, cookies={"sessionid": session_id}, stream=True,
                      timeout=(10, 30)) as response:
        response.raise_for_status()
        for raw in response.iter_lines(chunk_size=1, decode_unicode=True):
            if stop.is_set():
                return
            if not raw.startswith("data: "):
                continue
            now = time.time()
            for line in json.loads(raw[6:]).get("lines", []):
                m = PROBE.search(line["message"])
                if m:
                    into.setdefault(int(m[1]), now)
                    printed.setdefault(int(m[1]), float(m[2]))


def run_mode(address: str, mode: str, lines: int, every: float, web: str,
             buffer_s: float) -> dict[str, list[float]]:
    from django.conf import settings
    from django.db import connections
    from django.test import Client

    from controlplane.logs import follower, tail
    from controlplane.logs.models import LogLine
    from controlplane.logs.options import follow_config

    backend = use_emulator(address)
    config = replace(follow_config(), tail=(mode == "tail"), tail_buffer_window_s=buffer_s)
    job, _ = start_job(address, lines, every)
    stop = threading.Event()

    def sweeps() -> None:
        try:
            while not stop.is_set():
                began = time.monotonic()
                follower.follow(backend, config)
                stop.wait(max(0.0, 3.0 - (time.monotonic() - began)))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=sweeps)]
    if mode == "tail":
        threads.append(threading.Thread(target=tail.run, args=(
            backend, config, lambda: follower.followed_targets(backend.project, config), stop),
            kwargs={"refresh_s": 1.0}))
    for t in threads:
        t.start()

    stored: dict[int, float] = {}
    on_page: dict[int, float] = {}
    printed: dict[int, float] = {}
    client = Client(HTTP_HOST="127.0.0.1")  # an allowed host, as a browser would send
    client.force_login(job.created_by)
    streamed: dict[int, float] = {}
    assert settings.CP_LIVE_URL, "the event stream needs Redis (CP_LIVE_URL or REDIS_URL)"
    reader = threading.Thread(target=read_stream, daemon=True, args=(
        f"{web}/jobs/{job.pk}/events/", client.cookies["sessionid"].value, streamed, printed,
        stop))
    reader.start()
    url = f"/jobs/{job.pk}/partials/logs/"
    next_page = time.time() + random.uniform(0, PAGE_POLL_S)
    deadline = time.monotonic() + lines * every + 120
    # The stream carries what is stored after it opened (the page reads the rest once): the
    # last probe on it ends the wait.
    while ((len(on_page) < lines or lines - 1 not in streamed)
           and time.monotonic() < deadline):
        now = time.time()
        for message in LogLine.objects.filter(job=job, message__startswith="probe") \
                .values_list("message", flat=True):
            m = PROBE.search(message)
            if m and int(m[1]) not in stored:
                stored[int(m[1])] = now
                printed[int(m[1])] = float(m[2])
        if now >= next_page:
            html = client.get(url).content.decode()
            for m in PROBE.finditer(html):
                on_page.setdefault(int(m[1]), now)
                printed.setdefault(int(m[1]), float(m[2]))
            next_page += PAGE_POLL_S
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join()
    return {"stored": [stored[i] - printed[i] for i in stored],
            "polled": [on_page[i] - printed[i] for i in on_page],
            "streamed": [streamed[i] - printed[i] for i in streamed]}


def percentile(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 \
        else (values[0] if values else float("nan"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100)
    parser.add_argument("--every", type=float, default=0.5)
    parser.add_argument("--modes", default="list,tail")
    parser.add_argument("--tail-buffer", type=float, default=0.2,
                        help="TailLogEntries buffer_window in seconds (Cloud Logging: 0-60)")
    args = parser.parse_args()
    with scratch_database("latency") as url, emulator() as address, web_server(url) as web:
        print(f"machine: {machine()}; {postgres_version()}; emulator quota 60 calls/min; "
              f"{args.lines} probe lines, one every {args.every:g} s; page polled every "
              f"{PAGE_POLL_S:g} s; tail buffer window {args.tail_buffer:g} s; goal: p95 "
              f"<= {GOAL_S:g} s")
        for mode in args.modes.split(","):
            results = run_mode(address, mode, args.lines, args.every, web, args.tail_buffer)
            for what, values in results.items():
                if not values:
                    print(f"  {mode:<5} print -> {what:<8}: no line arrived", flush=True)
                    continue
                p95 = percentile(values, 95)
                print(f"  {mode:<5} print -> {what:<8}: p50 {percentile(values, 50):5.2f} s, "
                      f"p95 {p95:5.2f} s ({p95 / GOAL_S:4.2f}x the {GOAL_S:g} s goal), "
                      f"max {max(values):5.2f} s ({len(values)} lines)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
