"""`--wait`: poll a job, sweep or Ray job until it ends, saying each state it passes through."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from typing import Any

import click

from vcp import api

POLL_S = 2.0


def until_ended(fetch: Callable[[], Any], what: str, terminal: Collection[str]
                ) -> dict[str, Any]:
    """The resource (as JSON values) once its state is one of `terminal`; each new state is
    printed on stderr as `<what>: <STATE>`."""
    seen = None
    while True:
        current = api.plain(fetch())
        state = str(current.get("state"))
        if state != seen:
            click.echo(f"{what}: {state}", err=True)
            seen = state
        if state in terminal:
            return current
        time.sleep(POLL_S)
