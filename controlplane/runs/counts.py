"""The job list's `count` from the jobs' tally (runs.models.JobTally) instead of a count of
the jobs themselves.

Counting a team's jobs visits every one of them, so the API list's first page got slower with
each job a team ever ran (10,000 jobs: 3-4 ms of its ~12). The tally sums a few rows per
(team, kind, state, submitter) whatever the history, kept by PostgreSQL's triggers in the same
transactions as the jobs, so it is as exact as the count it replaces. The filters it cannot
answer (an accelerator in the request's JSON, a creation-time range) and databases without
the triggers (SQLite, for the demo) count the jobs as before.

The triggers only ever add rows; fold() sums each group's rows into one, so a sum reads a
handful of rows (run by beat every few minutes: controlplane/runs/tasks.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import Sum

from controlplane.runs.filters import ALL_KINDS, asked_kind, asked_state
from controlplane.runs.models import JobTally
from controlplane.teams.access import teams_of
from controlplane.teams.models import Team

# Filters the tally has no column for: with any of them the jobs are counted.
UNTALLIED = ("accelerator", "created_after", "created_before", "tag", "config")
# Serialises fold() runs (a PostgreSQL advisory lock's key: any constant of this app's own).
FOLD_LOCK = 0x6A6F6273  # "jobs"


def tallied() -> bool:
    """Whether this database keeps the tally (the triggers are PostgreSQL's)."""
    return connection.vendor == "postgresql"


def job_list_count(user: Any, params: Mapping[str, str],
                   kinds: Sequence[str] = ()) -> int | None:
    """The number of jobs GET /api/v1/jobs/ lists for these query parameters, by the tally;
    None where only counting the jobs can tell (the caller counts them). Kind and state go
    through the list's own parsers (controlplane/runs/filters.py); team and user are matched
    as the list matches them. `kinds` counts those kinds instead of the `kind` parameter's
    (the jobs page lists jobs and Ray jobs by default)."""
    if not tallied() or any(params.get(name, "").strip() for name in UNTALLIED):
        return None
    rows = JobTally.objects.filter(team_id__in=teams_of(user).values("pk"))
    kind = asked_kind(params.get("kind", ""))
    if kinds:
        rows = rows.filter(kind__in=kinds)
    elif kind != ALL_KINDS:
        rows = rows.filter(kind=kind)
    state = asked_state(params.get("state", ""))
    if state:
        rows = rows.filter(state=state)
    if params.get("team"):
        rows = rows.filter(team_id__in=Team.objects.filter(slug=params["team"]).values("pk"))
    if params.get("user"):
        users = get_user_model().objects.filter(username=params["user"]).values("pk")
        rows = rows.filter(created_by_id__in=users)
    return int(rows.aggregate(n=Sum("n"))["n"] or 0)


def fold() -> int:
    """Sum each group's tally rows into one (groups that sum to nothing: none), in one
    statement, so readers see the rows before or after and the same sums either way. Returns
    the number of rows removed. Rows that writers add meanwhile are left for the next fold."""
    if not tallied():
        return 0
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_xact_lock(%s)", [FOLD_LOCK])
        if not cursor.fetchone()[0]:
            return 0  # another fold is at it
        table = JobTally._meta.db_table
        columns = "team_id, kind, state, created_by_id"
        cursor.execute(
            f"WITH taken AS (DELETE FROM {table} RETURNING {columns}, n), "
            f"summed AS (INSERT INTO {table} ({columns}, n) SELECT {columns}, sum(n) "
            f"FROM taken GROUP BY {columns} HAVING sum(n) <> 0 RETURNING 1) "
            "SELECT (SELECT count(*) FROM taken) - (SELECT count(*) FROM summed)")
        return int(cursor.fetchone()[0])
