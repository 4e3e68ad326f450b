"""Values read once for a stretch of work instead of once for each item in it.

A reconcile page records hundreds of jobs' state changes in one transaction, and each change
asks for its team's Slack channels (the notification it may queue): the same rows, asked once
a job. Inside `scope()`, `once(key, read)` reads the first time a key is asked and gives that
value again until the scope ends; outside any scope it reads every time, so code that uses it
behaves as before wherever no caller opened one. The caller that opens a scope vouches that
what the keys name does not change for its work meanwhile (one transaction's worth).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_values: ContextVar[dict[Hashable, Any] | None] = ContextVar("memo", default=None)


@contextmanager
def scope() -> Iterator[None]:
    token = _values.set({})
    try:
        yield
    finally:
        _values.reset(token)


def once(key: Hashable, read: Callable[[], T]) -> T:
    values = _values.get()
    if values is None:
        return read()
    if key not in values:
        values[key] = read()
    return values[key]
