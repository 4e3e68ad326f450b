"""Cloud Logging filters that cover many jobs in as few queries as the length limit allows."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

MAX_FILTER_CHARS = 20_000
_OR = " OR "
# Every Vertex AI training job's entries (CustomJobs, and the trials of tuning jobs).
VERTEX_JOBS = 'resource.type="ml_job"'


def rfc3339(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def after(lower: datetime, insert_id: str = "") -> str:
    """Entries from a position on, in Cloud Logging's order (timestamp, then insertId).

    With an insertId, the entries at that very timestamp up to it are left out: a position
    with many entries at one instant is passed, not read again from its first one.
    """
    at = quote(rfc3339(lower))
    if not insert_id:
        return f"timestamp>={at}"
    return f"(timestamp>{at} OR (timestamp={at} AND insertId>{quote(insert_id)}))"


def head(lower: datetime | None, upper: datetime | None = None, insert_id: str = "") -> str:
    """The part every query shares, up to the opening parenthesis of the job ids."""
    parts = [VERTEX_JOBS]
    if lower is not None:
        parts.append(after(lower, insert_id))
    if upper is not None:
        parts.append(f"timestamp<{quote(rfc3339(upper))}")
    return " AND ".join(parts) + " AND ("


def term(job_id: str) -> str:
    return f'resource.labels.job_id="{job_id}"'


def pack(job_ids: Sequence[str], budget: int) -> list[list[str]]:
    """Consecutive runs of job ids whose OR fits in `budget` characters (order kept)."""
    runs: list[list[str]] = []
    run: list[str] = []
    used = 0
    for job_id in job_ids:
        cost = len(term(job_id)) + (len(_OR) if run else 0)
        if run and used + cost > budget:
            runs.append(run)
            run, used = [], 0
            cost = len(term(job_id))
        run.append(job_id)
        used += cost
    if run:
        runs.append(run)
    return runs


def budget_for(lower: datetime | None, upper: datetime | None = None,
               insert_id: str = "") -> int:
    return MAX_FILTER_CHARS - len(head(lower, upper, insert_id)) - len(")")


def query(job_ids: Iterable[str], lower: datetime | None, upper: datetime | None = None,
          insert_id: str = "") -> str:
    text = head(lower, upper, insert_id) + _OR.join(term(j) for j in job_ids) + ")"
    if len(text) > MAX_FILTER_CHARS:
        raise ValueError(f"filter of {len(text)} characters exceeds {MAX_FILTER_CHARS}")
    return text


def job_filters(job_ids: Iterable[str], since: datetime | None,
                upper: datetime | None = None) -> list[str]:
    """As few filters as the length limit allows, together covering every job once."""
    ids = sorted(set(job_ids))
    return [query(run, since, upper) for run in pack(ids, budget_for(since, upper))]


def job_filter(job_id: str) -> str:
    """One CustomJob's entries, as the follower asks for them: what Logs Explorer is opened
    with from a job's page."""
    return query([job_id], None)
