"""The log table's weekly partitions (PostgreSQL declarative partitioning, by `timestamp`).

Each week, Monday 00:00 UTC to the next, is a partition `jobs_logline_wYYYYMMDD`; a DEFAULT
partition takes any line outside them (an entry older than the first week kept, or a clock far
ahead), so a missing week never refuses a line. Retention (controlplane/logs/retention.py)
drops a week whole, an instant whatever its size, once every team's window has passed it;
shorter windows and the per-job cap still delete rows.

Weeks are made ahead of time (`ensure`, from the migration and from every retention pass, which
the beat runs hourly). A week made late, after the DEFAULT partition took some of its lines,
takes those lines over in the same transaction. Elsewhere than PostgreSQL (SQLite for the demo)
the table is a plain table and every function here does nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db import connection, transaction

TABLE = "jobs_logline"
DEFAULT = f"{TABLE}_default"
WEEK = timedelta(days=7)
# Weeks made beyond the current one: the beat may stop for this long without a line going to
# the DEFAULT partition.
AHEAD_WEEKS = 2
_NAME = re.compile(rf"^{TABLE}_w(\d{{8}})$")


@dataclass(frozen=True, order=True)
class Week:
    start: date  # a Monday

    @property
    def name(self) -> str:
        return f"{TABLE}_w{self.start:%Y%m%d}"

    @property
    def begins(self) -> datetime:
        return datetime(self.start.year, self.start.month, self.start.day, tzinfo=UTC)

    @property
    def ends(self) -> datetime:
        return self.begins + WEEK


def week_of(moment: datetime) -> Week:
    day = moment.astimezone(UTC).date()
    return Week(day - timedelta(days=day.weekday()))


def supported() -> bool:
    return connection.vendor == "postgresql"


def is_partitioned() -> bool:
    if not supported():
        return False
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_partitioned_table p JOIN pg_class c "
                       "ON c.oid = p.partrelid WHERE c.relname = %s "
                       "AND c.relnamespace = current_schema()::regnamespace", [TABLE])
        return cursor.fetchone() is not None


def weeks() -> list[Week]:
    """The weekly partitions there are, oldest first."""
    if not supported():
        return []
    with connection.cursor() as cursor:
        cursor.execute("SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                       "WHERE i.inhparent = %s::regclass", [TABLE])
        names = [row[0] for row in cursor.fetchall()]
    found = [_NAME.match(name) for name in names]
    return sorted(Week(datetime.strptime(m.group(1), "%Y%m%d").date()) for m in found if m)


def ensure(now: datetime, since: datetime | None = None) -> list[Week]:
    """Make the weeks from `since` (default: this week) to AHEAD_WEEKS after this one; returns
    those made now."""
    if not is_partitioned():
        return []
    first = week_of(since or now).start
    last = week_of(now).start + AHEAD_WEEKS * WEEK
    have = {week.start for week in weeks()}
    made = []
    day = first
    while day <= last:
        if day not in have:
            _make(Week(day))
            made.append(Week(day))
        day += WEEK
    return made


def _make(week: Week) -> None:
    """One week's partition. Lines of that week already in the DEFAULT partition would stop
    PostgreSQL from making it, so they are moved into it, all in one transaction."""
    bounds = [week.begins, week.ends]
    with transaction.atomic(), connection.cursor() as cursor:
        # Nothing may write a line of this week to the DEFAULT partition while it moves.
        cursor.execute(f"LOCK TABLE {TABLE} IN SHARE ROW EXCLUSIVE MODE")
        cursor.execute(f"CREATE TEMPORARY TABLE moving (LIKE {TABLE})")
        cursor.execute(f"WITH gone AS (DELETE FROM {DEFAULT} WHERE timestamp >= %s "
                       "AND timestamp < %s RETURNING *) INSERT INTO moving SELECT * FROM gone",
                       bounds)
        cursor.execute(f"CREATE TABLE {week.name} PARTITION OF {TABLE} "
                       "FOR VALUES FROM (%s) TO (%s)", bounds)
        cursor.execute(f"INSERT INTO {TABLE} SELECT * FROM moving")
        cursor.execute("DROP TABLE moving")


def drop_before(cutoff: datetime) -> list[Week]:
    """Drop every week that ends at or before `cutoff`; returns them."""
    dropped = [week for week in weeks() if week.ends <= cutoff]
    for week in dropped:
        with transaction.atomic(), connection.cursor() as cursor:
            # A table cannot go while checks of its rows wait for the commit (the foreign
            # key to the job is deferred): run them now.
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute(f"ALTER TABLE {TABLE} DETACH PARTITION {week.name}")
            cursor.execute(f"DROP TABLE {week.name}")
    return dropped


def partition(now: datetime, back: timedelta) -> None:
    """Rebuild a plain log table as a partitioned one with the same rows (the migration):
    weeks from the oldest line's, at most `back` ago, to AHEAD_WEEKS ahead; older lines go
    to the DEFAULT partition."""
    old = f"{TABLE}_unpartitioned"
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT MIN(timestamp) FROM {TABLE}")
        oldest = cursor.fetchone()[0] or now
    since = max(oldest, now - back)
    statements = [
        f"ALTER TABLE {TABLE} RENAME TO {old}",
        # Index names are the schema's: the new table's take the old ones' place.
        f"ALTER TABLE {old} RENAME CONSTRAINT {TABLE}_pkey TO {old}_pkey",
        f"ALTER TABLE {old} RENAME CONSTRAINT log_once_per_entry TO {old}_once",
        f"ALTER INDEX log_warnings RENAME TO {old}_warnings",
        f"""CREATE TABLE {TABLE} (
            id bigint NOT NULL,
            attempt integer NOT NULL CHECK (attempt >= 0),
            timestamp timestamp with time zone NOT NULL,
            severity smallint NOT NULL CHECK (severity >= 0),
            replica varchar(40) NOT NULL,
            message text NOT NULL,
            insert_id varchar(128) NOT NULL,
            job_id bigint NOT NULL,
            PRIMARY KEY (id, timestamp),
            CONSTRAINT log_once_per_entry UNIQUE (job_id, timestamp, insert_id)
        ) PARTITION BY RANGE (timestamp)""",
        f"CREATE TABLE {DEFAULT} PARTITION OF {TABLE} DEFAULT",
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement)
        ensure(now, since)
        cursor.execute(f"CREATE INDEX log_warnings ON {TABLE} (job_id, timestamp) "
                       "WHERE severity >= 400")
        cursor.execute(f"INSERT INTO {TABLE} (id, attempt, timestamp, severity, replica, "
                       "message, insert_id, job_id) SELECT id, attempt, timestamp, severity, "
                       f"replica, message, insert_id, job_id FROM {old}")
        # The old id sequence belongs to the old table and goes with it; a partitioned table
        # (PostgreSQL 15) takes no identity column, so its ids come from a sequence it owns.
        cursor.execute(f"DROP TABLE {old}")
        cursor.execute(f"CREATE SEQUENCE {TABLE}_id_seq OWNED BY {TABLE}.id")
        cursor.execute(f"SELECT setval('{TABLE}_id_seq', COALESCE(MAX(id), 0) + 1, false) "
                       f"FROM {TABLE}")
        cursor.execute(f"ALTER TABLE {TABLE} ALTER COLUMN id SET DEFAULT "
                       f"nextval('{TABLE}_id_seq')")
        # Last: it checks the copied rows at once, where a deferred check of each inserted
        # row would stop the ALTERs above.
        cursor.execute(f"ALTER TABLE {TABLE} ADD CONSTRAINT {TABLE}_job_id_fk_jobs_job_id "
                       "FOREIGN KEY (job_id) REFERENCES jobs_job (id) DEFERRABLE INITIALLY "
                       "DEFERRED")
