"""Job list and job detail response times (p50, p95) with a loaded database, next to a trivial
view on the same server.

    python -m bench.api_latency [--jobs 10000] [--log-lines 5000000] [--points 1000000]
                                [--busy-jobs 1000] [--requests 200] [--servers asgi,wsgi]
                                [--against DIR]

A scratch PostgreSQL database (created on DATABASE_URL's server, dropped afterwards) is filled
server-side (INSERT ... SELECT generate_series, no row crosses the wire): --jobs jobs in one
team, and --log-lines log lines and --points step-metric points spread evenly over the first
--busy-jobs of them (with the defaults: 5,000 lines and 1,000 steps per busy job). The web
server is the one production runs (gunicorn's asgi worker, 2 workers, as config/devstack.py
starts it; --servers asgi,wsgi also measures the WSGI server it replaced, 2 workers x 4
threads; --against DIR also serves the checkout in DIR from the same database, each request
sent to both in turn, for a before/after on a busy machine); one client sends the requests
one after another on a kept-alive connection, so the figures are service times, not
throughput. Detail requests pick a busy job at random each time.

Measured, by the token (API) or the session (pages) of a member of the team:
  healthz               GET /healthz/ (no session, no database): the server's floor
  API job list          GET /api/v1/jobs/ (a page of 50, newest first, with the total count)
  API job list, filter  GET /api/v1/jobs/?state=RUNNING&user=bench
  API job list, cursor  GET /api/v1/jobs/?cursor= (the first page by keyset, no count)
  API job detail        GET /api/v1/jobs/<id>/
  API log tail          GET /api/v1/jobs/<id>/logs/?order=desc&limit=100
  page job list         GET /
  page job detail       GET /jobs/<id>/ (timeline, checkpoints, the log tail)
  page metrics          GET /jobs/<id>/metrics.json (the charts' data: every step, thinned)
"""

from __future__ import annotations

import argparse
import os
import random
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.logs_ingest import postgres_version, scratch_database
from bench.machine import machine

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "bench-password"


def fill(jobs: int, log_lines: int, points: int, busy_jobs: int) -> tuple[str, list[int]]:
    """The rows, made by PostgreSQL itself; returns a member's API key and the busy job ids."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from controlplane.runs import counts
    from controlplane.runs.models import Job, JobState
    from controlplane.security import tokens
    from controlplane.teams.models import Membership, Role, Team

    team = Team.objects.create(name="Bench", slug="bench")
    user = get_user_model().objects.create_user(username="bench", password=PASSWORD)
    Membership.objects.create(user=user, team=team, role=Role.MEMBER)
    key = tokens.create(user, "bench").key
    request = {"name": "bench", "strategy": "ddp", "chief": {"machine_type": "n1-standard-4"},
               "workers": {"replica_count": 1}, "args": ["--preset", "tiny"]}
    template = Job(team=team, created_by=user, name="bench", request=request, custom_job={},
                   project="bench-project", region="us-central1", state=JobState.RUNNING)
    template.save()
    busy_jobs = min(busy_jobs, jobs)
    with connection.cursor() as cursor:
        # Every column as the template row has it (whatever columns the model has today),
        # with the name, state and creation time varied.
        cursor.execute("SELECT column_name FROM information_schema.columns "
                       "WHERE table_name = 'jobs_job' AND column_name <> 'id'")
        columns = [row[0] for row in cursor.fetchall()]
        varied = {
            "name": "'bench-' || n",
            "state": "(ARRAY['RUNNING','SUCCEEDED','FAILED','CANCELLED'])[1 + n %% 4]",
            "created_at": "now() - (n || ' minutes')::interval",
        }
        select = ", ".join(varied.get(c, f'j."{c}"') for c in columns)
        quoted = ", ".join(f'"{c}"' for c in columns)
        cursor.execute(
            f"INSERT INTO jobs_job ({quoted}) SELECT {select} FROM jobs_job j, "
            f"generate_series(1, %s) n WHERE j.id = %s", [jobs - 1, template.pk])
        cursor.execute("SELECT id FROM jobs_job ORDER BY id LIMIT %s", [busy_jobs])
        busy = [row[0] for row in cursor.fetchall()]
        per_job_lines = max(1, log_lines // busy_jobs)
        per_job_points = max(1, points // busy_jobs)
        cursor.execute(
            "INSERT INTO jobs_logline (job_id, attempt, timestamp, severity, replica, message, "
            "insert_id) SELECT j, 1, now() - ((%(n)s - i) || ' seconds')::interval, "
            "(ARRAY[100,200,200,200,400,500])[1 + i %% 6], 'workerpool0-' || (i %% 2), "
            "'step ' || i || ' loss 2.' || (i %% 97) || ' tokens/s 1834.2 lr 0.0003', "
            "'b' || j || '-' || i FROM unnest(%(busy)s::bigint[]) j, generate_series(1, %(n)s) i",
            {"busy": busy, "n": per_job_lines})
        cursor.execute(
            "INSERT INTO jobs_stepmetric (job_id, attempt, step, timestamp, loss, lr, "
            "tokens_per_s, step_time_s, span, insert_id) SELECT j, 1, i, "
            "now() - ((%(n)s - i) || ' seconds')::interval, 4.0 / (1 + i * 0.01), 0.0003, "
            "1800 + i %% 50, 0.21, 1, 'm' || j || '-' || i "
            "FROM unnest(%(busy)s::bigint[]) j, generate_series(1, %(n)s) i",
            {"busy": busy, "n": per_job_points})
        cursor.execute(
            "INSERT INTO jobs_jobevent (job_id, attempt, kind, timestamp, replica, step, data, "
            "insert_id) SELECT j, 1, 'checkpoint_saved', now() - ((%(n)s - i) || ' s')::interval, "
            "'workerpool0-0', i, jsonb_build_object('step', i, 'path', 'gs://b/step-' || i, "
            "'bytes', 1048576, 'seconds', 0.4), 'c' || j || '-' || i "
            "FROM unnest(%(busy)s::bigint[]) j, generate_series(50, %(n)s, 50) i",
            {"busy": busy, "n": per_job_points})
        cursor.execute("UPDATE jobs_job SET last_step = %s, total_steps = %s WHERE id = ANY(%s)",
                       [per_job_points, per_job_points, busy])
        cursor.execute("ANALYZE")
    # The jobs' tally as beat keeps it (folded every few minutes): one row per group, not
    # one per job the fill inserted.
    counts.fold()
    return key, busy


def counts() -> dict[str, int]:
    from controlplane.logs.models import LogLine, StepMetric
    from controlplane.runs.models import Job

    return {"jobs": Job.objects.count(), "log lines": LogLine.objects.count(),
            "metric points": StepMetric.objects.count()}


# The server the stack runs (config/devstack.py: Django under ASGI, gunicorn's asgi worker),
# and the WSGI server it replaced (2 workers x 4 threads), for comparison.
SERVERS = ("asgi", "wsgi")


def server_command(kind: str, port: int) -> list[str]:
    from config.devstack import Stack, StackConfig

    if kind == "wsgi":
        return [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}",
                "--workers", "2", "--threads", "4", "--log-level", "warning"]
    command = Stack(StackConfig(var_dir=ROOT / "var" / "bench", database_url="",
                                broker_url="", web_port=port)).commands()["web"]
    return [c for c in command if c not in ("--access-logfile", "-")] + [
        "--log-level", "warning"]


def start_server(database_url: str, port: int, kind: str = "asgi",
                 root: Path = ROOT) -> subprocess.Popen[bytes]:
    """The server of the checkout at `root` (another one: `--against`)."""
    # As production runs it (DEBUG off: no query log, no debug templates), over plain HTTP on
    # the loopback: no redirect to HTTPS, cookies sent without TLS.
    env = {**os.environ, "DATABASE_URL": database_url, "DEBUG": "false",
           "SECRET_KEY": secrets.token_urlsafe(50), "SECURE_SSL_REDIRECT": "false",
           "SECURE_COOKIES": "false",
           # Rate limits on, as production has them (each API request is counted), too high
           # for the benchmark's requests ever to be refused.
           "CP_API_RATE_USER": "1000000/minute", "CP_API_RATE_ANON": "1000000/minute",
           "LOG_LEVEL": "WARNING"}
    server = subprocess.Popen(server_command(kind, port), cwd=root, env=env)
    from config.devstack import wait_for_port

    wait_for_port(port, 60, server)
    return server


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


# The first few requests of a row warm the workers' connections and caches: not counted.
WARM_UP = 5


def timed(session: Any, base: str, path: str) -> float:
    """One GET's milliseconds; anything but a 200 stops the run."""
    start = time.perf_counter()
    response = session.get(base + path, timeout=60)
    elapsed = time.perf_counter() - start
    if response.status_code != 200:
        raise SystemExit(f"GET {path}: {response.status_code} {response.text[:300]}")
    return elapsed * 1000


def measure(session: Any, base: str, paths: list[str], requests: int) -> list[float]:
    times = [timed(session, base, paths[i % len(paths)]) for i in range(requests + WARM_UP)]
    return times[WARM_UP:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=10_000)
    parser.add_argument("--log-lines", type=int, default=5_000_000)
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--busy-jobs", type=int, default=1_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--servers", default="asgi",
                        help=f"comma-separated, of {', '.join(SERVERS)}: each measured in turn")
    parser.add_argument("--against", type=Path, default=None,
                        help="another checkout (e.g. `git worktree add /tmp/before <commit>`): "
                             "its ASGI server and this one's on the same data, interleaved")
    args = parser.parse_args(argv)
    kinds = [k for k in args.servers.split(",") if k in SERVERS] or ["asgi"]
    with scratch_database("api") as url:
        started = time.perf_counter()
        key, busy = fill(args.jobs, args.log_lines, args.points, args.busy_jobs)
        filled_s = time.perf_counter() - started
        sizes = counts()
        if args.against is not None:
            measured = run_against(url, key, busy, args.requests, args.against.resolve())
        else:
            measured = {kind: run_cases(url, kind, key, busy, args.requests) for kind in kinds}
        print(f"machine: {machine()}, {postgres_version()}")
        print(f"data: {sizes['jobs']:,} jobs, {sizes['log lines']:,} log lines, "
              f"{sizes['metric points']:,} metric points over {len(busy):,} jobs "
              f"(filled in {filled_s:.0f} s)")
        for kind, results in measured.items():
            described = ("gunicorn asgi worker (Django under ASGI), 2 workers" if kind == "asgi"
                         else "gunicorn WSGI, 2 workers x 4 threads" if kind == "wsgi"
                         else f"the asgi server of {ROOT if kind == 'this' else args.against}, "
                              "requests interleaved with the other's")
            print(f"server: {described}; {args.requests} sequential requests per row; "
                  "ratio: p95 / healthz p95")
            print(f"{'request':24} {'p50 ms':>8} {'p95 ms':>8} {'ratio':>6}")
            floor = results[0][2]
            for name, p50, p95 in results:
                print(f"{name:24} {p50:8.1f} {p95:8.1f} {p95 / floor:5.1f}x")
    return 0


def sessions(base: str, key: str) -> dict[str, Any]:
    """A member's token (API), a member's signed-in browser (pages), and no one (healthz)."""
    import requests

    api = requests.Session()
    api.headers["Authorization"] = f"Token {key}"
    browser = requests.Session()
    browser.get(f"{base}/login/", timeout=30)
    login = browser.post(f"{base}/login/", data={
        "username": "bench", "password": PASSWORD,
        "csrfmiddlewaretoken": browser.cookies["csrftoken"]},
        headers={"Referer": f"{base}/login/"}, timeout=30)
    assert "/login/" not in login.url, "login failed"
    return {"api": api, "browser": browser, "anonymous": requests.Session()}


def cases(busy: list[int], requests_each: int) -> list[tuple[str, str, list[str]]]:
    """Each row: its name, whose session asks, and the paths asked in turn."""
    rng = random.Random(7)
    picks = [rng.choice(busy) for _ in range(requests_each)]
    return [
        ("healthz", "anonymous", ["/healthz/"]),
        ("API job list", "api", ["/api/v1/jobs/"]),
        ("API job list, filter", "api", ["/api/v1/jobs/?state=RUNNING&user=bench"]),
        ("API job list, cursor", "api", ["/api/v1/jobs/?cursor="]),
        ("API job detail", "api", [f"/api/v1/jobs/{j}/" for j in picks]),
        ("API log tail", "api", [f"/api/v1/jobs/{j}/logs/?order=desc&limit=100"
                                 for j in picks]),
        ("page job list", "browser", ["/"]),
        ("page job detail", "browser", [f"/jobs/{j}/" for j in picks]),
        ("page metrics", "browser", [f"/jobs/{j}/metrics.json" for j in picks]),
    ]


def run_cases(url: str, kind: str, key: str, busy: list[int], requests_each: int
              ) -> list[tuple[str, float, float]]:
    from config.ports import reserve_port

    port = reserve_port()
    server = start_server(url, port, kind)
    base = f"http://127.0.0.1:{port}"
    try:
        asking = sessions(base, key)
        results = [(name, *percentiles(measure(asking[who], base, paths, requests_each)))
                   for name, who, paths in cases(busy, requests_each)]
    finally:
        server.terminate()
        server.wait(timeout=30)
    return results


def run_against(url: str, key: str, busy: list[int], requests_each: int, other: Path
                ) -> dict[str, list[tuple[str, float, float]]]:
    """This checkout's ASGI server and `other`'s on the same database, each request sent to
    both in turn (in alternating order), so that on a busy machine both meet the same load."""
    from config.ports import reserve_port

    roots = {"this": ROOT, "against": other}
    servers, bases = {}, {}
    try:
        for name, root in roots.items():
            port = reserve_port()
            servers[name] = start_server(url, port, "asgi", root)
            bases[name] = f"http://127.0.0.1:{port}"
        asking = {name: sessions(base, key) for name, base in bases.items()}
        results: dict[str, list[tuple[str, float, float]]] = {name: [] for name in roots}
        for row, who, paths in cases(busy, requests_each):
            times: dict[str, list[float]] = {name: [] for name in roots}
            for i in range(requests_each + WARM_UP):
                for name in (list(roots) if i % 2 else list(roots)[::-1]):
                    elapsed = timed(asking[name][who], bases[name], paths[i % len(paths)])
                    if i >= WARM_UP:
                        times[name].append(elapsed)
            for name in roots:
                results[name].append((row, *percentiles(times[name])))
    finally:
        for server in servers.values():
            server.terminate()
            server.wait(timeout=30)
    return results


if __name__ == "__main__":
    sys.exit(main())
