"""Insert many rows, skipping those a unique key already holds.

PostgreSQL: first one COPY straight into the table, in a savepoint. A page read for the first
time (a backlog, the fresh end of a running job) holds no stored row, so that COPY is all the
work, at COPY's speed. When a row is already there (the follower re-reads on purpose: the
settle pass, overlapping reads, the tail and the list storing the same entry) the unique key
stops the COPY at that row, the savepoint undoes it, and the page goes the careful way: COPY
into a temporary table, then one INSERT ... SELECT ... ON CONFLICT DO NOTHING, which drops
the stored rows without a round trip per row. A re-read page meets a stored row at its
first rows (pages are in time order and a re-read starts before the stored end), so the
first try costs little there. Other databases (SQLite for the demo):
bulk_create(ignore_conflicts=True).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import psycopg
from django.db import connection, models, transaction


def insert_ignoring_duplicates(model: type[models.Model], columns: Sequence[str],
                               rows: Sequence[tuple[Any, ...]], *,
                               new_keys: tuple[Sequence[str], set[tuple[Any, ...]]] | None = None,
                               ) -> int:
    """Insert rows (values in `columns` order). Returns how many were new on PostgreSQL;
    elsewhere, how many were offered. With new_keys=(key columns, a set), the set receives
    those columns' values of each row that was new (elsewhere: of every row offered)."""
    if not rows:
        return 0
    if connection.vendor == "postgresql":
        try:
            with transaction.atomic():  # a savepoint: a stored row undoes only this COPY
                inserted = _copy_direct(model, columns, rows)
        except psycopg.errors.UniqueViolation:
            with transaction.atomic():
                return _copy_insert(model, columns, rows, new_keys)
        if new_keys is not None:
            at = [list(columns).index(c) for c in new_keys[0]]
            new_keys[1].update(tuple(row[i] for i in at) for row in rows)
        return inserted
    if new_keys is not None:
        at = [list(columns).index(c) for c in new_keys[0]]
        new_keys[1].update(tuple(row[i] for i in at) for row in rows)
    # Rows carry raw values (a job's id, not the Job), so foreign keys go by their attname.
    names = [model._meta.get_field(c).attname for c in columns]  # type: ignore[union-attr]
    objs = [model(**dict(zip(names, row, strict=True))) for row in rows]
    model.objects.bulk_create(objs, ignore_conflicts=True, batch_size=500)
    return len(objs)


def _copy_direct(model: type[models.Model], columns: Sequence[str],
                 rows: Sequence[tuple[Any, ...]]) -> int:
    fields = [model._meta.get_field(c) for c in columns]
    names = ", ".join(f.column for f in fields)  # type: ignore[union-attr]
    with (connection.cursor() as cursor,
          cursor.cursor.copy(f"COPY {model._meta.db_table} ({names}) FROM STDIN") as copy):
        for row in rows:
            copy.write_row(row)
    return len(rows)


def _copy_insert(model: type[models.Model], columns: Sequence[str],
                 rows: Sequence[tuple[Any, ...]],
                 new_keys: tuple[Sequence[str], set[tuple[Any, ...]]] | None) -> int:
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
        returning = ""
        if new_keys is not None:
            returning = " RETURNING " + ", ".join(
                model._meta.get_field(c).column for c in new_keys[0])  # type: ignore[union-attr]
        cursor.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {stage} "
                       f"ON CONFLICT DO NOTHING{returning}")
        inserted = cursor.rowcount
        if new_keys is not None:
            new_keys[1].update(tuple(row) for row in cursor.fetchall())
        # Several batches may share one transaction.
        cursor.execute(f"DELETE FROM {stage}")
    return inserted
