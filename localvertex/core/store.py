"""The emulator's state in one SQLite file, so that it survives an emulator restart.

A Store keeps one kind of record in a table behind one lock: every change is a read-modify-write
of one row (changes to jobs and resources are rare next to log writes, which have a writer
thread of their own: cloudlogging/store.py). A Table says how a kind of record lies in its
table: the key, the columns a row holds and how a record turns into them and back. Several
kinds may share one table, each with a `scope` (the models, endpoints, persistent resources
and operations of serving_objects).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

R = TypeVar("R")


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=30, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


class Conflict(Exception):
    """A record with that key exists already."""


@dataclass(frozen=True)
class Table(Generic[R]):
    name: str
    # CREATE TABLE / INDEX IF NOT EXISTS: run at every start, so an older file keeps its rows.
    schema: str
    # What a row holds, the key first; `encode` gives a record's values for them, `decode`
    # makes a record of a row of them.
    columns: tuple[str, ...]
    encode: Callable[[R], tuple[object, ...]]
    decode: Callable[[tuple], R]
    # ORDER BY of select().
    order: str
    # (column, value) that every row of this kind holds, where kinds share the table.
    scope: tuple[tuple[str, object], ...] = ()
    # (column, SQL expression) set once, when a row is inserted.
    on_insert: tuple[tuple[str, str], ...] = ()

    @property
    def key(self) -> str:
        return self.columns[0]


class Store(Generic[R]):
    """The records of one Table; thread-safe."""

    def __init__(self, db_path: Path, table: Table[R]) -> None:
        self.table = table
        self._conn = connect(db_path)
        self._conn.executescript(table.schema)
        self._conn.commit()
        self._lock = threading.RLock()
        columns = ", ".join(table.columns)
        scope = "".join(f" AND {column} = ?" for column, _ in table.scope)
        self._scope = tuple(value for _, value in table.scope)
        self._get_sql = f"SELECT {columns} FROM {table.name} WHERE {table.key} = ?{scope}"
        inserted = [*(c for c, _ in table.scope), *table.columns, *(c for c, _ in table.on_insert)]
        values = ["?"] * (len(table.scope) + len(table.columns)) + [
            sql for _, sql in table.on_insert]
        self._insert_sql = (f"INSERT INTO {table.name} ({', '.join(inserted)})"
                            f" VALUES ({', '.join(values)})")
        self._update_sql = (f"UPDATE {table.name} SET "
                            f"{', '.join(f'{c} = ?' for c in table.columns[1:])}"
                            f" WHERE {table.key} = ?{scope}")
        self._delete_sql = f"DELETE FROM {table.name} WHERE {table.key} = ?{scope}"
        self._select_sql = f"SELECT {columns} FROM {table.name} WHERE 1{scope}"
        row = self._conn.execute(
            f"SELECT max(CAST({table.key} AS INTEGER)) FROM {table.name} WHERE 1{scope}",
            self._scope).fetchone()
        self._last_id = int(row[0] or 0)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def new_id(self) -> str:
        """A new id, digits like Vertex's: from the clock in microseconds, past every id this
        store has issued or holds, so never reused."""
        with self._lock:
            self._last_id = max(time.time_ns() // 1000, self._last_id + 1)
            return str(self._last_id)

    def get(self, key: str) -> R | None:
        with self._lock:
            return self._get(key)

    def _get(self, key: str) -> R | None:
        row = self._conn.execute(self._get_sql, (key, *self._scope)).fetchone()
        return self.table.decode(row) if row else None

    def insert(self, record: R) -> None:
        """Conflict if a record of that key is stored already."""
        values = self.table.encode(record)
        with self._lock:
            if self._get(str(values[0])) is not None:
                raise Conflict(values[0])
            self._conn.execute(self._insert_sql, (*self._scope, *values))
            self._conn.commit()

    def put(self, record: R) -> None:
        """Insert or replace."""
        values = self.table.encode(record)
        with self._lock:
            if self._get(str(values[0])) is None:
                self._conn.execute(self._insert_sql, (*self._scope, *values))
            else:
                self._conn.execute(self._update_sql, (*values[1:], values[0], *self._scope))
            self._conn.commit()

    def update(self, key: str, change: Callable[[R], None]) -> R:
        """Apply `change` to the stored record and save it, atomically; KeyError if it is gone."""
        with self._lock:
            record = self._get(key)
            if record is None:
                raise KeyError(key)
            change(record)
            values = self.table.encode(record)
            self._conn.execute(self._update_sql, (*values[1:], key, *self._scope))
            self._conn.commit()
            return record

    def delete(self, key: str) -> None:
        with self._lock:
            self._conn.execute(self._delete_sql, (key, *self._scope))
            self._conn.commit()

    def select(self, where: str = "", params: tuple[object, ...] = (),
               limit: int | None = None) -> list[R]:
        """The records a SQL condition on the table's columns picks, in the table's order; the
        first LIMIT of them when given."""
        condition = f" AND ({where})" if where else ""
        bound = f" LIMIT {int(limit)}" if limit is not None else ""
        with self._lock:
            rows = self._conn.execute(
                f"{self._select_sql}{condition} ORDER BY {self.table.order}{bound}",
                (*self._scope, *params)).fetchall()
        return [self.table.decode(row) for row in rows]
