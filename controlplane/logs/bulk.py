"""Insert many rows, skipping those a unique key already holds.

PostgreSQL: first one COPY straight into each table, all in one savepoint. A page read for
the first time (a backlog, the fresh end of a running job) holds no stored row, so those
COPYs are all the work, at COPY's speed. When a row is already there (the follower re-reads
on purpose: the settle pass, overlapping reads, the tail and the list storing the same
entry) the unique key stops a COPY at that row, the savepoint undoes them all, and the page
goes the careful way: COPY into a temporary table, then one statement that empties it into
the table with INSERT ... ON CONFLICT DO NOTHING, which drops the stored rows without a round
trip per row. A re-read page meets a stored row at its first rows (pages are in time order
and a re-read starts before the stored end), so the first try costs little there. Other
databases (SQLite for the demo): bulk_create(ignore_conflicts=True).

The first batch's rows may come from an iterator that makes them (`produce`): they are
written into the COPY as they are made, so making them (parsing a page, checking it) runs
while PostgreSQL stores the rows sent before, instead of before all of it. `before_finish`
runs once every row is sent and before waiting for PostgreSQL to store them: work that needs
no database goes there, at the same time as the database's.

The tables' foreign keys are checked at the commit (Django makes them DEFERRABLE INITIALLY
DEFERRED): one lookup of the job per row, the largest part of storing a page. Within
checked_meanwhile() PostgreSQL runs those checks while the caller goes on: the rest of a
page's work in Python overlaps them instead of following them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg
from django.db import connection, models, transaction

_SAVEPOINT = "cp_bulk_copy"
# (database, table) -> the names of the table's deferred foreign keys, asked once a process.
_deferred_keys: dict[tuple[str, str], tuple[str, ...]] = {}


def savepoint_after(cursor: Any) -> str:
    """What to append to a statement the caller sends on `cursor` (a Django cursor) just
    before insert_batches, inside its transaction, so that the statement also makes the
    COPYs' savepoint and spares insert_batches a round trip (then pass savepoint_made=True):
    "; SAVEPOINT ..." where the driver sends statements as they are (psycopg's client-side
    binding, Django's default), else "" (a statement of its own, as before)."""
    if (connection.vendor != "postgresql" or not connection.in_atomic_block
            or not isinstance(cursor.cursor, psycopg.ClientCursor)):
        return ""
    return f"; SAVEPOINT {_SAVEPOINT}"


@dataclass(frozen=True)
class Batch:
    """Rows for one table, values in `columns` order. `keys`: the columns by which to report
    which rows were new (none: not asked)."""

    model: type[models.Model]
    columns: Sequence[str]
    rows: Sequence[tuple[Any, ...]]
    keys: Sequence[str] = ()


@dataclass(frozen=True)
class Inserted:
    count: int  # rows new to the table (elsewhere than PostgreSQL: rows offered)
    # The `keys` values of the rows that were new; None when every row offered was (and
    # when no keys were asked).
    new: set[tuple[Any, ...]] | None = None


def insert_batches(batches: Sequence[Batch], produce: Iterator[object] | None = None,
                   before_finish: Callable[[], None] | None = None,
                   savepoint_made: bool = False) -> list[Inserted]:
    """Insert each batch, skipping stored rows; one Inserted per batch, in order.
    savepoint_made: the caller's last statement ended with savepoint_after()'s text.

    produce: an iterator whose every step appends rows to the first batch's rows (and may
    add rows to the others); exhausted here, before any other batch is written.
    before_finish runs once, whichever way the rows go."""
    finished = False

    def finish() -> None:
        nonlocal finished
        if before_finish is not None and not finished:
            finished = True
            before_finish()

    def make_all() -> None:
        for _ in produce or ():
            pass
        finish()

    if connection.vendor != "postgresql":
        make_all()
        return [_bulk_create(batch) for batch in batches]
    if produce is None and not any(batch.rows for batch in batches):
        finish()
        return [Inserted(0) for _ in batches]
    if not connection.in_atomic_block:
        with transaction.atomic():
            return insert_batches(batches, produce, before_finish)
    # A stored row undoes only these COPYs: a savepoint of our own, not Django's, so that it
    # is not released (one more round trip a page; the commit releases it anyway) and a
    # stored row rolls back to it.
    if not savepoint_made:
        with connection.cursor() as cursor:
            cursor.execute(f"SAVEPOINT {_SAVEPOINT}")
    try:
        _copy_direct(batches[0], produce, finish)
        for batch in batches[1:]:
            _copy_direct(batch)
    except psycopg.errors.UniqueViolation:
        with connection.cursor() as cursor:
            cursor.execute(f"ROLLBACK TO SAVEPOINT {_SAVEPOINT}")
        make_all()  # the rows not made yet when PostgreSQL refused one
        with transaction.atomic():
            return [_copy_insert(batch) for batch in batches]
    return [Inserted(len(batch.rows)) for batch in batches]


def insert_ignoring_duplicates(model: type[models.Model], columns: Sequence[str],
                               rows: Sequence[tuple[Any, ...]], *,
                               new_keys: tuple[Sequence[str], set[tuple[Any, ...]]] | None = None,
                               ) -> int:
    """Insert rows (values in `columns` order). Returns how many were new on PostgreSQL;
    elsewhere, how many were offered. With new_keys=(key columns, a set), the set receives
    those columns' values of each row that was new (elsewhere: of every row offered)."""
    keys = tuple(new_keys[0]) if new_keys is not None else ()
    [inserted] = insert_batches([Batch(model, columns, rows, keys)])
    if new_keys is not None:
        new_keys[1].update(_key_values(columns, keys, rows) if inserted.new is None
                           else inserted.new)
    return inserted.count


def _key_values(columns: Sequence[str], keys: Sequence[str],
                rows: Sequence[tuple[Any, ...]]) -> set[tuple[Any, ...]]:
    at = [list(columns).index(c) for c in keys]
    return {tuple(row[i] for i in at) for row in rows}


def _bulk_create(batch: Batch) -> Inserted:
    # Rows carry raw values (a job's id, not the Job), so foreign keys go by their attname.
    names = [batch.model._meta.get_field(c).attname  # type: ignore[union-attr]
             for c in batch.columns]
    objs = [batch.model(**dict(zip(names, row, strict=True))) for row in batch.rows]
    batch.model.objects.bulk_create(objs, ignore_conflicts=True, batch_size=500)
    return Inserted(len(objs))


def _names(batch: Batch) -> str:
    return ", ".join(batch.model._meta.get_field(c).column  # type: ignore[union-attr]
                     for c in batch.columns)


@contextlib.contextmanager
def _binary_copy(cursor: Any, table: str, batch: Batch) -> Iterator[Any]:
    """A COPY of the batch's columns into `table` in PostgreSQL's binary form, each column
    sent as its own type: no number or time written out as text by the driver and parsed
    back by the server (the text form cost the page's Python as much again as routing its
    entries). JSON columns take their values as they are (dicts, lists, None)."""
    with cursor.cursor.copy(f"COPY {table} ({_names(batch)}) FROM STDIN (FORMAT BINARY)"
                            ) as copy:
        copy.set_types([_type_name(batch.model._meta.get_field(c)) for c in batch.columns])
        yield copy


def _type_name(field: Any) -> str:
    """The column's type as the driver names it: "varchar(40)" is a varchar."""
    return str(field.db_type(connection)).partition("(")[0]


def _copy_direct(batch: Batch, produce: Iterator[object] | None = None,
                 finish: Callable[[], None] | None = None) -> None:
    if produce is None and not batch.rows:
        if finish is not None:
            finish()
        return
    with (connection.cursor() as cursor,
          _binary_copy(cursor, batch.model._meta.db_table, batch) as copy):
        write, rows, sent = copy.write_row, batch.rows, 0
        for _ in produce or ((),):
            for row in rows[sent:]:
                write(row)
            sent = len(rows)
        if finish is not None:
            finish()  # PostgreSQL stores what it was sent meanwhile


def _copy_insert(batch: Batch) -> Inserted:
    if not batch.rows:
        return Inserted(0, set() if batch.keys else None)
    table = batch.model._meta.db_table
    stage = f"stage_{table}"
    fields = [batch.model._meta.get_field(c) for c in batch.columns]
    names = _names(batch)
    types = ", ".join(f"{f.column} {f.db_type(connection)}" for f in fields)  # type: ignore[union-attr]
    returning = ""
    if batch.keys:
        returning = " RETURNING " + ", ".join(
            batch.model._meta.get_field(c).column for c in batch.keys)  # type: ignore[union-attr]
    with connection.cursor() as cursor:
        # One per database session. Asked for every time: a rolled-back transaction takes
        # the table it created with it. ON COMMIT DELETE ROWS empties it at every commit.
        cursor.execute(f"CREATE TEMPORARY TABLE IF NOT EXISTS {stage} ({types}) "
                       "ON COMMIT DELETE ROWS")
        with _binary_copy(cursor, stage, batch) as copy:
            for row in batch.rows:
                copy.write_row(row)
        # Emptied as it is read: several batches may share one transaction.
        cursor.execute(f"WITH staged AS (DELETE FROM {stage} RETURNING {names}) "
                       f"INSERT INTO {table} ({names}) SELECT {names} FROM staged "
                       f"ON CONFLICT DO NOTHING{returning}")
        inserted = cursor.rowcount
        new = {tuple(row) for row in cursor.fetchall()} if batch.keys else None
    return Inserted(inserted, new)


@contextlib.contextmanager
def checked_meanwhile(*tables: type[models.Model]) -> Iterator[None]:
    """Check the deferred foreign keys of every row the transaction wrote so far to
    `tables`, on the server while the block runs, instead of at the commit; the block's own
    statements queue behind the check (psycopg's pipeline mode: a statement is sent at once
    and its reply read later). A row whose key fails raises, as Django's IntegrityError,
    when its reply is read: within the block or at its end, as it would have at the commit.
    The keys are deferred again for what the transaction writes next. A query's rows may be
    fetched within the block (that waits for them), but no row count is known there (an ORM
    save() reads one: not here). Elsewhere (SQLite, no transaction): the block alone."""
    if (connection.vendor != "postgresql" or not connection.in_atomic_block
            or not psycopg.Pipeline.is_supported()):  # a libpq older than 14: at the commit
        yield
        return
    with connection.cursor() as cursor:
        names = [name for table in tables
                 for name in _deferred_foreign_keys(cursor, table._meta.db_table)]
    if not names:
        yield
        return
    listed = ", ".join(connection.ops.quote_name(name) for name in names)
    # Errors read at the pipeline's end are the driver's own: wrapped as Django's, as
    # everywhere else.
    with connection.wrap_database_errors, connection.connection.pipeline():
        with connection.cursor() as cursor:
            cursor.execute(f"SET CONSTRAINTS {listed} IMMEDIATE")
            cursor.execute(f"SET CONSTRAINTS {listed} DEFERRED")
        yield


def _deferred_foreign_keys(cursor: Any, table: str) -> tuple[str, ...]:
    """The table's foreign keys checked at the commit (a partitioned table's partitions carry
    its keys under the same names)."""
    key = (str(connection.settings_dict["NAME"]), table)
    if key not in _deferred_keys:
        cursor.execute("SELECT DISTINCT conname FROM pg_constraint WHERE conrelid = "
                       "%s::regclass AND contype = 'f' AND condeferred ORDER BY conname",
                       [table])
        _deferred_keys[key] = tuple(row[0] for row in cursor.fetchall())
    return _deferred_keys[key]
