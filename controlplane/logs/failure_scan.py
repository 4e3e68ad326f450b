"""The failure scan of a page the store writes (controlplane/logs/store.py): which of each
replica's lines may report a failure (one search over the page's text, no database: it runs
while PostgreSQL stores the page's lines), then the scan from one such line to the next, and
the failures found, a few of each kind per job. A replica's lines are its line rows
(store.LINE_COLUMNS: job, attempt, time, severity, replica, message, insertId)."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.db.models import Count

from controlplane.logs.models import LogFailure, LogLine
from vertexplan.logparse import failures
from vertexplan.logparse.entries import SEVERITY_NUMBERS

# Lines before a batch that may hold the start of a traceback the batch ends.
TRACEBACK_LOOKBACK = 200
# A crash loop prints the same failure again and again: the page needs a few, not thousands.
MAX_FAILURES_PER_KIND = 20


def reporting(scan: Mapping[tuple[int, int, str], list[tuple[Any, ...]]]
              ) -> dict[tuple[int, int, str], set[int]]:
    """The lines of each replica that may report a failure or start a traceback (outside a
    traceback the others report nothing), by their place in the replica's list: one search
    over the page's lines, needing no database."""
    found = sorted(failures.reporting([row[5] for lines in scan.values() for row in lines]))
    marks: dict[tuple[int, int, str], set[int]] = {}
    first = 0
    for key, lines in scan.items():
        last = first + len(lines)
        marks[key] = {at - first for at in
                      found[bisect.bisect_left(found, first):bisect.bisect_left(found, last)]}
        first = last
    return marks


def store(scan: Mapping[tuple[int, int, str], list[tuple[Any, ...]]],
          hits: Mapping[tuple[int, int, str], set[int]]) -> None:
    """Scan each replica's lines from one that may report (`hits`, from reporting()) to the
    next, and store what is found."""
    found: list[LogFailure] = []
    for (job_id, attempt, replica), lines in scan.items():
        scanner = failures.TracebackScanner()
        if failures.is_traceback_continuation(lines[0][5]):
            for stream, before in _lines_before(job_id, replica, lines[0][2]).items():
                scanner.prime(before, stream)
        # Fed are the lines that may report (the search's marks) and every line while the
        # scanner is inside a traceback; the loop jumps from one to the next, not through
        # the page's thousand lines that report nothing.
        marks = iter(sorted(hits[(job_id, attempt, replica)]))
        at = 0 if scanner.in_traceback else next(marks, len(lines))
        while at < len(lines):
            _, _, timestamp, severity, _, message, insert_id = lines[at]
            failure = scanner.feed(message, _stream(severity))
            if failure is not None:
                found.append(LogFailure(
                    job_id=job_id, attempt=attempt, kind=failure.kind,
                    timestamp=timestamp, replica=replica, summary=failure.summary,
                    last_frame=failure.last_frame, insert_id=insert_id))
            at += 1
            if not scanner.in_traceback:
                at = next((mark for mark in marks if mark >= at), len(lines))
    if not found:
        return
    jobs = {f.job_id for f in found}
    counts = {(r["job_id"], r["kind"]): r["n"] for r in
              LogFailure.objects.filter(job_id__in=jobs).values("job_id", "kind")
              .annotate(n=Count("id"))}
    kept = []
    for failure in found:
        key = (failure.job_id, failure.kind)
        if counts.get(key, 0) < MAX_FAILURES_PER_KIND:
            counts[key] = counts.get(key, 0) + 1
            kept.append(failure)
    LogFailure.objects.bulk_create(kept, ignore_conflicts=True)


def _stream(severity: int) -> str:
    """Which pipe a line came from. Vertex writes stderr's text at ERROR and stdout's at INFO;
    the two are read apart, so their lines interleave in time and each is scanned alone."""
    return "stderr" if severity >= SEVERITY_NUMBERS["ERROR"] else "stdout"


def _lines_before(job_id: int, replica: str, before: datetime) -> dict[str, list[str]]:
    """The replica's preceding lines (every severity: a traceback may be on stdout), oldest
    first, by stream."""
    rows = (LogLine.objects.filter(job_id=job_id, replica=replica, timestamp__lt=before)
            .order_by("-timestamp", "-insert_id")
            .values_list("severity", "message")[:TRACEBACK_LOOKBACK])
    by_stream: dict[str, list[str]] = defaultdict(list)
    for severity, message in reversed(list(rows)):
        by_stream[_stream(severity)].append(message)
    return by_stream
