"""Times read from PostgreSQL parsed in C.

psycopg parses a `timestamptz` column in C where its compiled module is installed
(psycopg[binary]), but Django replaces that loader with its own, a subclass of psycopg's
pure-Python one (to set the time zone it expects on each value), and a C class cannot be
subclassed: every time the ORM reads was parsed in Python, about 3 microseconds each. A
reconcile sweep over 10,000 running jobs reads some 470,000 of them (their rows, their newest
steps: bench.reconcile_sweep), a job list or page thousands.

On each new connection, the loader below takes Django's place: psycopg's C loader parses,
and the value is given Django's time zone as Django's loader gives it (`timezone`, which
Django's cursor compares with its own to decide whether to register another). Where the C
module is not installed nothing changes.
"""

from __future__ import annotations

from datetime import datetime, tzinfo
from functools import cache
from typing import Any

from psycopg.adapt import Loader

try:
    from psycopg_binary._psycopg import TimestamptzLoader as _CTimestamptzLoader
except ImportError:  # psycopg without its compiled module
    _CTimestamptzLoader = None


@cache
def loader_for(zone: tzinfo | None) -> type[Loader] | None:
    """A text `timestamptz` loader giving ZONE to each value, as Django's does; None where
    psycopg has no C loader to parse with. One class a zone: a pooled connection is handed
    out, and announced as created, at every request."""
    if _CTimestamptzLoader is None:
        return None
    parser_class = _CTimestamptzLoader

    class CTimestamptzLoader(Loader):
        timezone = zone

        def __init__(self, oid: int, context: Any = None) -> None:
            super().__init__(oid, context)
            self._parse = parser_class(oid, context).load

        def load(self, data: Any) -> datetime:
            return self._parse(data).replace(tzinfo=zone)

    return CTimestamptzLoader


def on_connection_created(sender: Any, connection: Any, **_: Any) -> None:
    """Register the C-parsing loader on a new PostgreSQL connection (connection_created)."""
    if connection.vendor != "postgresql":
        return
    loader = loader_for(connection.timezone)
    if loader is not None:
        connection.connection.adapters.register_loader("timestamptz", loader)
