"""Log ingestion into PostgreSQL: the follower's storage path next to PostgreSQL's raw COPY of
the same rows.

    python -m bench.logs_ingest [--entries 200000] [--jobs 20] [--rounds 3]

DATABASE_URL names the PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres);
the benchmark works in a scratch database of its own there, migrated, dropped at the end.

Entries look like a trainer's: over `--jobs` jobs and two replicas each, one in ten a JSON step
event (a step metric too), one in fifty a warning, the rest plain lines of about 90 characters;
stored a page of 1000 at a time as the follower stores them (controlplane.logs.store.store_entries:
parse, check each entry is the job's own, COPY into the indexed tables (a page with stored rows:
COPY to a staging table, INSERT ... ON CONFLICT DO NOTHING), the failure scan, progress of
every job touched). Measured, best of --rounds each, each as a ratio to COPY into the indexed
table (the first goal: store >= 0.8x) and to bare COPY; the store is also given as a ratio to
"COPY, paged" (issue 39's goal: store >= 0.9x):
  store            entries/s through store_entries into empty tables
  store, re-read   the same pages again: every row a duplicate, as the settle pass reads them
  COPY, indexed    raw COPY of the same log-line rows into jobs_logline (its indexes and keys)
  COPY, paged      raw COPY of every row the store writes (the lines and the step metrics) a
                   page at a time, each page committed (asynchronously, as the store commits):
                   what storing pages as they arrive costs PostgreSQL with no work in Python
  COPY, bare       raw COPY of the same rows into a table with no index or key: the floor
Beside the store and the paged COPY: the Python process's own CPU time a page (best of the
rounds), which a loaded machine stretches far less than the wall time: what the store's Python
costs beyond the floor's.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from bench.machine import machine

SERVER = "postgres://postgres@127.0.0.1:5432/postgres"
PAGE = 1000
GOAL = 0.8
# Issue 39: the store against the floor for a store that commits each page before it moves on.
PAGED_GOAL = 0.9


@contextlib.contextmanager
def scratch_database(tag: str) -> Iterator[str]:
    """A migrated database of its own on DATABASE_URL's server; Django set up on it."""
    import psycopg

    server = os.environ.get("DATABASE_URL", SERVER)
    if not server.startswith(("postgres://", "postgresql://")):
        server = SERVER
    parts = urlsplit(server)
    name = f"bench_{tag}_{os.getpid()}"
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = urlunsplit(parts._replace(path=f"/{name}"))
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DEBUG", "true")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    try:
        call_command("migrate", verbosity=0)
        yield url
    finally:
        connections.close_all()
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def postgres_version() -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        return f"PostgreSQL {cursor.fetchone()[0]}"


def make_jobs(count: int, project: str = "bench-project",
              created: datetime | None = None) -> list[Any]:
    """Jobs with one submitted attempt each (created a minute ago unless told), in a team of
    their own."""
    from django.contrib.auth import get_user_model

    from controlplane.runs.models import Job, JobAttempt, JobState
    from controlplane.teams.models import Team

    team, _ = Team.objects.get_or_create(name="Bench", slug="bench")
    user, _ = get_user_model().objects.get_or_create(username="bench")
    jobs = Job.objects.bulk_create(
        Job(team=team, created_by=user, name=f"bench-{n}", request={}, custom_job={},
            project=project, region="us-central1", state=JobState.RUNNING)
        for n in range(count))
    start = created or datetime.now(UTC) - timedelta(minutes=1)
    return JobAttempt.objects.bulk_create(
        JobAttempt(job=job, number=1, display_name=f"cp-{job.pk}-a1",
                   vertex_job_id=str(5 * 10**18 + job.pk), created_at=start, submitted_at=start)
        for job in jobs)


def entries(attempts: list[Any], count: int, start: datetime, tag: str = "") -> list[Any]:
    from vertexplan.logparse.entries import LogEntry

    out = []
    steps = dict.fromkeys(range(len(attempts)), 0)
    for i in range(count):
        n = i % len(attempts)
        job_id = attempts[n].vertex_job_id
        at = start + timedelta(microseconds=250 * i)
        insert_id = f"{tag}{i:012d}"
        if i % 10 == 0:
            steps[n] += 1
            payload = {"event": "step", "message": f"step {steps[n]}", "step": float(steps[n]),
                       "total_steps": 1e6, "loss": 3.0 / steps[n], "lr": 3e-4,
                       "tokens_per_s": 51234.5, "step_time_s": 0.081}
            out.append(LogEntry(insert_id, at, 200, job_id, "workerpool0-0", json_payload=payload))
        else:
            severity = 400 if i % 50 == 1 else 200
            text = (f"[rank{i % 8}] iteration {i}: dataloader fetched batch of 64 sequences, "
                    f"queue depth {i % 17}, prefetch ok")
            out.append(LogEntry(insert_id, at, severity, job_id, f"workerpool{i % 2}-0",
                                text_payload=text))
    return out


LINE_COLUMNS = "job_id, attempt, timestamp, severity, replica, message, insert_id"
STEP_COLUMNS = ("job_id, attempt, step, timestamp, loss, lr, tokens_per_s, step_time_s, span, "
                "insert_id")


def line_rows(page: list[Any], targets: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(targets[e.job_id].job_id, 1, e.timestamp, e.severity, e.task_name,
             e.text_payload if e.text_payload is not None else json.dumps(e.json_payload),
             e.insert_id) for e in page]


def step_rows(page: list[Any], targets: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The step metric rows the store makes of a page's step events."""
    return [(targets[e.job_id].job_id, 1, int(p["step"]), e.timestamp, p["loss"], p["lr"],
             p["tokens_per_s"], p["step_time_s"], 1, e.insert_id)
            for e in page if (p := e.json_payload) is not None and p.get("event") == "step"]


def timed(fn: Any, cpu: dict[str, float] | None = None, name: str = "") -> float:
    """Wall seconds of fn(); with `cpu`, its process CPU seconds kept there, the least seen."""
    started, used = time.perf_counter(), time.process_time()
    fn()
    if cpu is not None:
        cpu[name] = min(cpu.get(name, 1e9), time.process_time() - used)
    return time.perf_counter() - started


def truncate(*tables: str) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(f"TRUNCATE {', '.join(tables)} CASCADE")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=200_000)
    parser.add_argument("--jobs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with scratch_database("ingest"):
        from django.db import connection, transaction

        from controlplane.logs.store import Target, store_entries

        print(f"machine: {machine()}; {postgres_version()}")
        attempts = make_jobs(args.jobs)
        targets = {a.vertex_job_id: Target(a.job_id, 1) for a in attempts}
        data = entries(attempts, args.entries, datetime.now(UTC) - timedelta(hours=1))
        pages = [data[i:i + PAGE] for i in range(0, len(data), PAGE)]
        rows = line_rows(data, targets)
        paged = [(line_rows(page, targets), step_rows(page, targets)) for page in pages]
        tables = "jobs_logline, jobs_stepmetric, jobs_jobevent, jobs_logfailure"

        def store_all() -> None:
            for page in pages:
                store_entries(page, targets)

        def copy(table: str) -> None:
            with (transaction.atomic(), connection.cursor() as cursor,
                  cursor.cursor.copy(f"COPY {table} ({LINE_COLUMNS}) FROM STDIN") as out):
                for row in rows:
                    out.write_row(row)

        def copy_pages() -> None:
            for lines, steps in paged:
                with transaction.atomic(), connection.cursor() as cursor:
                    cursor.execute("SET LOCAL synchronous_commit TO OFF")
                    for table, columns, page_rows in (("jobs_logline", LINE_COLUMNS, lines),
                                                      ("jobs_stepmetric", STEP_COLUMNS, steps)):
                        with cursor.cursor.copy(
                                f"COPY {table} ({columns}) FROM STDIN") as out:
                            for row in page_rows:
                                out.write_row(row)

        with connection.cursor() as cursor:
            cursor.execute("CREATE TABLE bare_lines (job_id bigint, attempt integer, "
                           "timestamp timestamptz, severity smallint, replica varchar(40), "
                           "message text, insert_id varchar(128))")
        results: dict[str, float] = {}
        cpu: dict[str, float] = {}
        for _ in range(args.rounds):
            truncate(tables)
            results["store"] = min(results.get("store", 1e9), timed(store_all, cpu, "store"))
            results["store, re-read"] = min(results.get("store, re-read", 1e9), timed(store_all))
            truncate(tables)
            results["COPY, indexed"] = min(results.get("COPY, indexed", 1e9),
                                           timed(lambda: copy("jobs_logline")))
            truncate(tables)
            results["COPY, paged"] = min(results.get("COPY, paged", 1e9),
                                         timed(copy_pages, cpu, "COPY, paged"))
            truncate("bare_lines")
            results["COPY, bare"] = min(results.get("COPY, bare", 1e9),
                                        timed(lambda: copy("bare_lines")))
        print(f"{args.entries} entries over {args.jobs} jobs, pages of {PAGE}, best of "
              f"{args.rounds}:")
        floor = args.entries / results["COPY, bare"]
        indexed = args.entries / results["COPY, indexed"]
        for name, seconds in results.items():
            rate = args.entries / seconds
            print(f"  {name:<16} {rate:>10,.0f} entries/s  ({seconds:6.2f} s, "
                  f"{rate / indexed:5.2f}x COPY into the indexed table, "
                  f"{rate / floor:5.2f}x bare COPY)")
        print(f"  goal: store >= {GOAL:g}x COPY into the indexed table: "
              f"{args.entries / results['store'] / indexed:.2f}x; goal: store >= "
              f"{PAGED_GOAL:g}x COPY, paged: {results['COPY, paged'] / results['store']:.2f}x")
        per_page = 1000 / len(pages)
        print(f"  Python CPU a page: store {cpu['store'] * per_page:.2f} ms, COPY, paged "
              f"{cpu['COPY, paged'] * per_page:.2f} ms (store / COPY, paged "
              f"{cpu['store'] / cpu['COPY, paged']:.2f}x); load average "
              f"{os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
