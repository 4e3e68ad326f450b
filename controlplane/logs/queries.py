"""What the job page and the API read: filtered log lines, metric series, progress, failures.

Each query is shaped for an index of controlplane.runs.models (log_tail, log_warnings, step_series,
step_newest), so a page stays fast on a job with millions of lines.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from django.db import connection
from django.db.models import Count, Max, QuerySet

from contract.events import RUN_STARTED
from controlplane.logs.models import LogFailure, LogLine, StepMetric
from controlplane.runs import panels
from controlplane.runs.models import Job, JobState
from vertexplan.digits import ascii_int
from vertexplan.logparse import failures
from vertexplan.logparse.entries import SEVERITY_NUMBERS
from vertexplan.perf import MfuBasis, mfu_basis
from vertexplan.summaries import pool_summaries

SERIES = ("loss", "lr", "tokens_per_s", "step_time_s")
# Series computed from the stored ones: MFU from throughput (vertexplan.perf).
DERIVED_SERIES = ("mfu",)
ALL_SERIES = SERIES + DERIVED_SERIES
# Steps per second is measured over this many of the newest points.
RATE_POINTS = 50


class BadFilter(ValueError):
    """A filter value the caller must fix (an unknown severity...)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class LogFilter:
    severity: int | None = None   # this level and above
    q: str = ""                   # case-insensitive substring of the message
    replica: str = ""             # task name, e.g. workerpool1-0
    attempt: int | None = None

    @classmethod
    def from_params(cls, params: Mapping[str, str]) -> LogFilter:
        severity = None
        raw = (params.get("severity") or "").strip().upper()
        if raw:
            severity = SEVERITY_NUMBERS.get(raw)
            if severity is None:
                severity = ascii_int(raw, max_digits=4)
            if severity is None:
                raise BadFilter("severity",
                                f"unknown severity; valid: {', '.join(SEVERITY_NUMBERS)}")
        attempt = None
        if params.get("attempt"):
            raw = params["attempt"]
            # Digits only, as the schema says (int() would also take "-1", " 2" and "1_0").
            attempt = ascii_int(raw)
            if not attempt:
                raise BadFilter("attempt", "attempt is a whole number, at least 1")
        return cls(severity=severity, q=(params.get("q") or "").strip()[:200],
                   replica=(params.get("replica") or "").strip()[:40], attempt=attempt)

    def apply(self, lines: QuerySet[LogLine]) -> QuerySet[LogLine]:
        if self.severity:
            lines = lines.filter(severity__gte=self.severity)
        if self.replica:
            lines = lines.filter(replica=self.replica)
        if self.attempt is not None:
            lines = lines.filter(attempt=self.attempt)
        if self.q:
            lines = lines.filter(message__icontains=self.q)
        return lines

    @property
    def active(self) -> bool:
        return bool(self.severity or self.q or self.replica or self.attempt is not None)


def log_lines(job: Job, log_filter: LogFilter) -> QuerySet[LogLine]:
    """The job's lines matching the filter, oldest first (reverse it for a tail)."""
    return log_filter.apply(LogLine.objects.filter(job=job)).order_by("timestamp", "insert_id")


class TailLine(NamedTuple):
    """A line of the log panel: the columns it shows, no model built for it (the panel draws
    200 of them on every redraw while a job runs)."""

    timestamp: datetime
    severity: int
    replica: str
    message: str
    insert_id: str


def tail(job: Job, log_filter: LogFilter, limit: int) -> list[TailLine]:
    """The newest `limit` matching lines, oldest first, as a terminal shows them."""
    newest = log_filter.apply(LogLine.objects.filter(job=job)).order_by("-timestamp",
                                                                        "-insert_id")
    rows = newest.values_list(*TailLine._fields)[:limit]
    return [TailLine(*row) for row in list(rows)[::-1]]


def replicas(job: Job) -> list[str]:
    """The job's task names, from its worker pools (no scan of its log lines)."""
    names = []
    for index, pool in enumerate(pool_summaries(job.custom_job)):
        names += [f"workerpool{index}-{n}" for n in range(max(pool.replicas, 1))]
    return names


# --- metrics ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Point:
    attempt: int
    step: int
    timestamp: datetime
    span: int
    values: dict[str, float | None]
    # The step's other numbers by name (StepMetric.extra): the custom panels.
    extra: dict[str, float] | None = None


def points(job: Job, attempt: int | None = None, *, latest: bool = False) -> list[Point]:
    """Every stored step row in chart order: attempt, then step (a resumed attempt repeats
    the steps after its checkpoint, so each attempt is its own line). latest: of the rows of
    one step in one attempt (a replica restarted from a checkpoint ran it again), only the
    newest."""
    rows = StepMetric.objects.filter(job=job)
    if attempt is not None:
        rows = rows.filter(attempt=attempt)
    fields = ("attempt", "step", "timestamp", "span", "extra", *SERIES)
    out = [Point(r[0], r[1], r[2], r[3], dict(zip(SERIES, r[5:], strict=True)),
                 r[4] if isinstance(r[4], dict) else None)
           for r in rows.order_by("attempt", "step", "timestamp").values_list(*fields)]
    if latest and out:
        out = [p for p, after in zip(out, [*out[1:], None], strict=True)
               if after is None or (after.attempt, after.step) != (p.attempt, p.step)]
    return out


# The custom panels a job page draws at most (the names first seen first).
MAX_CUSTOM_SERIES = 12


def custom_series(rows: Sequence[Point]) -> dict[str, list[float | None]]:
    """Each other number the steps report (grad_norm, epoch, a team's own metric), as a column
    beside the rows (null where a row lacks it); at most MAX_CUSTOM_SERIES, first seen first."""
    names: list[str] = []
    for point in rows:
        for name in point.extra or ():
            if name not in names and len(names) < MAX_CUSTOM_SERIES:
                names.append(name)
    return {name: [(p.extra or {}).get(name) for p in rows] for name in names}


def thin(rows: Sequence[Any], limit: int) -> list[Any]:
    """Every k-th row, keeping the last (the newest point is the one people look at)."""
    rows = list(rows)
    if len(rows) <= limit:
        return rows
    stride = -(-len(rows) // limit)
    thinned = rows[::stride]
    if thinned[-1] is not rows[-1]:
        thinned.append(rows[-1])
    return thinned


@dataclass(frozen=True)
class Mfu:
    """Each attempt's MFU basis (its own run_started event), or why there is none."""

    bases: dict[int, MfuBasis | str]

    def basis(self, attempt: int) -> MfuBasis | str:
        return self.bases.get(attempt, "no run_started event yet: it reports the model's size")

    def value(self, point: Point) -> float | None:
        basis = self.basis(point.attempt)
        if isinstance(basis, str):
            return None
        return basis.mfu(point.values.get("tokens_per_s"))

    def reason(self) -> str | None:
        """Why MFU is missing, for the newest attempt that has no basis; None when every
        attempt has one."""
        for attempt in sorted(self.bases, reverse=True):
            if isinstance(self.bases[attempt], str):
                return f"attempt {attempt}: {self.bases[attempt]}"
        return None if self.bases else self.basis(0)

    def describe(self) -> str | None:
        """How the newest attempt's MFU is computed (the FLOPs count, the peak and its
        source)."""
        for attempt in sorted(self.bases, reverse=True):
            basis = self.bases[attempt]
            if not isinstance(basis, str):
                return basis.describe()
        return None


def mfu(job: Job) -> Mfu:
    """MFU's basis per attempt: rank 0's newest run_started of that attempt (it carries the
    model's shape and precision), the job's worker pools, and its request's precision."""
    starts = (job.events.filter(kind=RUN_STARTED, data__rank=0)
              .order_by("attempt", "timestamp", "id").values_list("attempt", "data"))
    newest: dict[int, dict[str, Any]] = {}
    for attempt, data in starts[:10_000]:
        newest[attempt] = data if isinstance(data, dict) else {}
    precision = (job.request or {}).get("precision") if isinstance(job.request, dict) else None
    return Mfu({attempt: mfu_basis(data, job.custom_job, precision)
                for attempt, data in newest.items()})


def reports_mfu(job: Job) -> bool:
    """Whether any step of the job has an MFU: a throughput in an attempt whose run_started
    gives the model's shape on accelerators (a CPU job never has one). The job page leaves its
    MFU chart out when not."""
    bases = mfu(job).bases
    attempts = [attempt for attempt, basis in bases.items() if not isinstance(basis, str)]
    if not attempts:
        return False
    return StepMetric.objects.filter(job=job, attempt__in=attempts,
                                     tokens_per_s__gte=0).exists()


def series(rows: Sequence[Point], names: Sequence[str] = SERIES,
           mfu_of: Mfu | None = None) -> list[dict[str, Any]]:
    """One column set per metric, without the points where it is missing. mfu: at every
    point with a throughput, null where it cannot be computed, with the reason beside."""
    out = []
    for name in names:
        if name == "mfu":
            basis = mfu_of or Mfu({})
            kept = [p for p in rows if p.values.get("tokens_per_s") is not None]
            out.append({
                "name": name,
                "attempt": [p.attempt for p in kept],
                "step": [p.step for p in kept],
                "timestamp": [p.timestamp.isoformat() for p in kept],
                "value": [basis.value(p) for p in kept],
                "reason": basis.reason(),
                "basis": basis.describe(),
            })
            continue
        kept = [p for p in rows if p.values.get(name) is not None]
        out.append({
            "name": name,
            "attempt": [p.attempt for p in kept],
            "step": [p.step for p in kept],
            "timestamp": [p.timestamp.isoformat() for p in kept],
            "value": [p.values[name] for p in kept],
        })
    return out


# --- progress -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Progress:
    last_step: int | None
    total_steps: int | None
    percent: int | None
    steps_per_s: float | None
    eta_s: float | None
    cost_so_far_micros: int | None

    def as_dict(self) -> dict[str, Any]:
        return {"last_step": self.last_step, "total_steps": self.total_steps,
                "percent": self.percent, "steps_per_s": self.steps_per_s, "eta_s": self.eta_s,
                "cost_so_far_micros": self.cost_so_far_micros}


def progress(job: Job, active: bool) -> Progress:
    rate = steps_per_second(job) if active else None
    eta = None
    if rate and job.total_steps and job.last_step is not None:
        eta = max(job.total_steps - job.last_step, 0) / rate
    percent = None
    if job.total_steps and job.last_step is not None:
        percent = max(0, min(100, round(100 * job.last_step / job.total_steps)))
    return Progress(job.last_step, job.total_steps, percent, rate, eta, cost_so_far_micros(job))


def steps_per_second(job: Job) -> float | None:
    """The recent training speed: steps over time across the newest points of the newest
    attempt (after a restart, the new run's own pace)."""
    newest = list(StepMetric.objects.filter(job=job).order_by("-timestamp", "-step")
                  .values_list("attempt", "step", "timestamp")[:RATE_POINTS])
    run = [r for r in newest if r[0] == newest[0][0]] if newest else []
    # Stop at a step going backwards: the run before a restart is another pace.
    kept = run[:1]
    for row in run[1:]:
        if row[1] >= kept[-1][1]:
            break
        kept.append(row)
    if len(kept) < 2:
        return None
    seconds = (kept[0][2] - kept[-1][2]).total_seconds()
    steps = kept[0][1] - kept[-1][1]
    return steps / seconds if seconds > 0 and steps > 0 else None


def cost_so_far_micros(job: Job) -> int | None:
    """The job's billed cost so far (micro-dollars) on the progress bar, as the costs app
    reports it (controlplane/runs/panels.py); None shows it as not known yet."""
    value = panels.report("cost_so_far_micros", job)
    return int(value) if value is not None else None


# --- failures -----------------------------------------------------------------------------------

def diagnosis(job: Job) -> list[dict[str, Any]]:
    """One entry per kind of failure seen, newest kind first, with what to do about it."""
    rows = (LogFailure.objects.filter(job=job).values("kind")
            .annotate(n=Count("id"), newest=Max("timestamp")).order_by("-newest"))
    out = []
    for row in rows:
        latest = (LogFailure.objects.filter(job=job, kind=row["kind"])
                  .order_by("-timestamp", "-id").first())
        if latest is None:
            continue
        kind = failures.KINDS.get(row["kind"], failures.KINDS["python_traceback"])
        out.append({
            "kind": row["kind"], "title": kind.title, "explanation": kind.explanation,
            "fix": kind.fix, "count": row["n"], "summary": latest.summary,
            "last_frame": latest.last_frame, "replica": latest.replica,
            "attempt": latest.attempt, "timestamp": latest.timestamp.isoformat(),
        })
    return out


def headline(job: Job) -> dict[str, Any] | None:
    """The one diagnosis to show first for a failed job: in its last attempt with a failure,
    the most telling kind (a named cause over a bare traceback over CustomJob.error alone),
    its first occurrence (the root cause; later ones are often its echoes), with the fix."""
    return headlines([job]).get(job.pk)


# The failures headline() weighs per job, oldest first in its newest attempt.
HEADLINE_ROWS = 200
HEADLINE_COLUMNS = ("job_id", "attempt", "kind", "summary", "last_frame", "replica")


def headlines(jobs: Sequence[Job]) -> dict[int, dict[str, Any]]:
    """headline() of each failed job of a page, by job id: one query for the whole page
    (a job list of 50 rows would otherwise ask once per failed row)."""
    failed = [job.pk for job in jobs if job.state == JobState.FAILED]
    if not failed:
        return {}
    found: dict[int, list[dict[str, Any]]] = {}
    # Written as SQL (PostgreSQL and SQLite both read it): the ORM's filter on a window
    # function costs more to build than the query takes to run, on every page of the list.
    table = LogFailure._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {', '.join(HEADLINE_COLUMNS)} FROM (SELECT *, ROW_NUMBER() OVER ("
            "PARTITION BY job_id ORDER BY attempt DESC, timestamp ASC, id ASC) AS nth "
            f"FROM {table} WHERE job_id IN ({', '.join(['%s'] * len(failed))})) AS ranked "
            "WHERE nth <= %s ORDER BY job_id, attempt DESC, timestamp, id",
            [*failed, HEADLINE_ROWS])
        for values in cursor.fetchall():
            row = dict(zip(HEADLINE_COLUMNS, values, strict=True))
            found.setdefault(row["job_id"], []).append(row)
    return {pk: _headline_of(rows) for pk, rows in found.items()}


def _headline_of(found: list[dict[str, Any]]) -> dict[str, Any]:
    last = found[0]["attempt"]
    best = min((f for f in found if f["attempt"] == last),
               key=lambda f: failures.headline_rank(f["kind"]))
    kind = failures.KINDS.get(best["kind"], failures.KINDS["job_error"])
    return {"kind": best["kind"], "title": kind.title, "summary": best["summary"],
            "fix": kind.fix, "last_frame": best["last_frame"], "replica": best["replica"],
            "attempt": best["attempt"]}
