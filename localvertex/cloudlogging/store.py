"""Log entries in SQLite, written by one thread so that many replicas printing at once never
contend for the database, and read by the API threads through their own connections (WAL mode
lets reads run while the writer commits).
"""

from __future__ import annotations

import itertools
import json
import logging
import queue
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from localvertex.cloudlogging.entries import StoredEntry
from localvertex.cloudlogging.filter import SqlFilter
from localvertex.core.store import connect

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY,
    project TEXT NOT NULL,
    log_name TEXT NOT NULL,
    resource_type TEXT NOT NULL,
    job_id TEXT,
    task_name TEXT,
    resource_labels TEXT NOT NULL,
    labels TEXT NOT NULL,
    severity INTEGER NOT NULL,
    timestamp_ns INTEGER NOT NULL,
    insert_id TEXT NOT NULL,
    text_payload TEXT,
    json_payload TEXT,
    entry BLOB NOT NULL
);
-- Cloud Logging treats entries with the same log, timestamp and insertId as one.
CREATE UNIQUE INDEX IF NOT EXISTS entries_identity ON entries (log_name, timestamp_ns, insert_id);
CREATE INDEX IF NOT EXISTS entries_by_time ON entries (project, timestamp_ns, insert_id);
CREATE INDEX IF NOT EXISTS entries_by_job ON entries (job_id, timestamp_ns, insert_id);
CREATE TABLE IF NOT EXISTS log_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""

_INSERT = """
INSERT OR IGNORE INTO entries (project, log_name, resource_type, job_id, task_name,
    resource_labels, labels, severity, timestamp_ns, insert_id, text_payload, json_payload, entry)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

# Bounded so that a replica printing faster than SQLite can store blocks on its pipe
# (back-pressure) instead of growing the emulator's memory without limit.
_QUEUE_SIZE = 20_000
_BATCH = 2_000


@dataclass(frozen=True)
class Cursor:
    """Where a page ended: the ordering key of its last entry."""

    timestamp_ns: int
    insert_id: str
    rowid: int


@dataclass(frozen=True)
class Page:
    blobs: list[bytes]
    last: Cursor | None
    more: bool


class _Flush:
    def __init__(self) -> None:
        self.done = threading.Event()


_STOP = object()


class LogStore:
    def __init__(self, db_path: Path) -> None:
        self._path = db_path
        conn = connect(db_path)
        conn.executescript(_SCHEMA)
        row = conn.execute("SELECT value FROM log_meta WHERE key='insert_seq'").fetchone()
        conn.commit()
        # insertIds are zero-padded decimal numbers, so string order is arrival order. Starting
        # from the wall clock in microseconds (or past the last one issued) keeps them unique
        # across emulator restarts.
        start = max(time.time_ns() // 1000, (row[0] + 1) if row else 0)
        self._seq = itertools.count(start)
        self._issued = start - 1
        self._seq_lock = threading.Lock()
        self._queue: queue.Queue[object] = queue.Queue(maxsize=_QUEUE_SIZE)
        self._readers = threading.local()
        self._writer = threading.Thread(
            target=self._write_loop, args=(conn,), name="logstore-writer", daemon=True
        )
        self._writer.start()

    # -- writing ---------------------------------------------------------------------------

    def next_insert_id(self) -> str:
        with self._seq_lock:
            self._issued = next(self._seq)
            return f"{self._issued:020d}"

    def append(self, entry: StoredEntry) -> None:
        self._queue.put(entry)

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything appended so far is committed."""
        marker = _Flush()
        try:
            self._queue.put(marker, timeout=timeout)
        except queue.Full:
            return False
        return marker.done.wait(timeout)

    def close(self, timeout: float = 10.0) -> None:
        if self._writer.is_alive():
            self._queue.put(_STOP, timeout=timeout)
            self._writer.join(timeout)

    def _write_loop(self, conn: sqlite3.Connection) -> None:
        stopping = False
        while not stopping:
            batch = [self._queue.get()]
            while len(batch) < _BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            rows = [_row(item) for item in batch if isinstance(item, StoredEntry)]
            try:
                if rows:
                    conn.executemany(_INSERT, rows)
                    with self._seq_lock:
                        issued = self._issued
                    conn.execute(
                        "INSERT OR REPLACE INTO log_meta (key, value) VALUES ('insert_seq', ?)",
                        (issued,),
                    )
                conn.commit()
            except sqlite3.Error:
                log.exception("could not store %d log entries", len(rows))
                conn.rollback()
            for item in batch:
                if isinstance(item, _Flush):
                    item.done.set()
                elif item is _STOP:
                    stopping = True
        conn.close()

    # -- reading ---------------------------------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        conn = getattr(self._readers, "conn", None)
        if conn is None:
            conn = connect(self._path)
            conn.execute("PRAGMA query_only=1")
            self._readers.conn = conn
        return conn

    def page(
        self,
        projects: list[str],
        where: SqlFilter,
        *,
        descending: bool,
        page_size: int,
        after: Cursor | None,
    ) -> Page:
        """One page of entries in (timestamp, insertId) order, starting after `after`."""
        sql, params = _project_clause(projects)
        clauses = [sql, where.where]
        params.extend(where.params)
        if after is not None:
            clauses.append(f"(timestamp_ns, insert_id, id) {'<' if descending else '>'} (?, ?, ?)")
            params.extend([after.timestamp_ns, after.insert_id, after.rowid])
        direction = "DESC" if descending else "ASC"
        query = (
            "SELECT id, timestamp_ns, insert_id, entry FROM entries WHERE "
            + " AND ".join(clauses)
            + f" ORDER BY timestamp_ns {direction}, insert_id {direction}, id {direction}"
            + " LIMIT ?"
        )
        params.append(page_size + 1)
        rows = self._reader().execute(query, params).fetchall()
        more = len(rows) > page_size
        rows = rows[:page_size]
        last = Cursor(rows[-1][1], rows[-1][2], rows[-1][0]) if rows else after
        return Page([r[3] for r in rows], last, more)

    def newer_than(
        self, rowid: int, projects: list[str], where: SqlFilter, limit: int
    ) -> list[tuple[int, int, bytes]]:
        """Entries stored after `rowid` (arrival order) as (rowid, timestamp_ns, blob)."""
        sql, params = _project_clause(projects)
        params.extend(where.params)
        params.extend([rowid, limit])
        query = (
            f"SELECT id, timestamp_ns, entry FROM entries WHERE {sql} AND {where.where}"
            " AND id > ? ORDER BY id LIMIT ?"
        )
        return self._reader().execute(query, params).fetchall()

    def last_rowid(self) -> int:
        row = self._reader().execute("SELECT max(id) FROM entries").fetchone()
        return row[0] or 0


def _project_clause(projects: list[str]) -> tuple[str, list[object]]:
    if len(projects) == 1:
        return "project = ?", [projects[0]]
    return "project IN (SELECT value FROM json_each(?))", [json.dumps(projects)]


def _row(e: StoredEntry) -> tuple[object, ...]:
    return (
        e.project,
        e.log_name,
        e.resource_type,
        e.job_id,
        e.task_name,
        e.resource_labels,
        e.labels,
        e.severity,
        e.timestamp_ns,
        e.insert_id,
        e.text_payload,
        e.json_payload,
        e.blob,
    )
