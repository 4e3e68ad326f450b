"""Insert many rows, skipping those a unique key already holds.

PostgreSQL: COPY into a temporary table, then one INSERT ... SELECT ... ON CONFLICT DO
NOTHING. COPY is the fastest way into PostgreSQL, and the INSERT drops the rows already
stored (the follower re-reads entries on purpose) without a round trip per row. Other
databases (SQLite for the demo): bulk_create(ignore_conflicts=True).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection, models, transaction


def insert_ignoring_duplicates(model: type[models.Model], columns: Sequence[str],
                               rows: Sequence[tuple[Any, ...]]) -> int:
    """Insert rows (values in `columns` order). Returns how many were new on PostgreSQL;
    elsewhere, how many were offered."""
    if not rows:
        return 0
    if connection.vendor == "postgresql":
        with transaction.atomic():
            return _copy_insert(model, columns, rows)
    # Rows carry raw values (a job's id, not the Job), so foreign keys go by their attname.
    names = [model._meta.get_field(c).attname for c in columns]  # type: ignore[union-attr]
    objs = [model(**dict(zip(names, row, strict=True))) for row in rows]
    model.objects.bulk_create(objs, ignore_conflicts=True, batch_size=500)
    return len(objs)


def _copy_insert(model: type[models.Model], columns: Sequence[str],
                 rows: Sequence[tuple[Any, ...]]) -> int:
    table = model._meta.db_table
    stage = f"stage_{table}"
    fields = [model._meta.get_field(c) for c in columns]
    names = ", ".join(f.column for f in fields)  # type: ignore[union-attr]
    types = ", ".join(f"{f.column} {f.db_type(connection)}" for f in fields)  # type: ignore[union-attr]
    with connection.cursor() as cursor:
        # One per database session. Asked for every time: a rolled-back transaction takes
        # the table it created with it. ON COMMIT DELETE ROWS empties it at every commit.
        cursor.execute(f"CREATE TEMPORARY TABLE IF NOT EXISTS {stage} ({types}) "
                       "ON COMMIT DELETE ROWS")
        with cursor.cursor.copy(f"COPY {stage} ({names}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
        cursor.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {stage} "
                       "ON CONFLICT DO NOTHING")
        inserted = cursor.rowcount
        # Several batches may share one transaction.
        cursor.execute(f"DELETE FROM {stage}")
    return inserted
