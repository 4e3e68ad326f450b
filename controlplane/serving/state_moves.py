"""A row's state moves, shared by the serving models: one conditional UPDATE per move."""

from __future__ import annotations

import logging
from typing import Any

from django.db import models

logger = logging.getLogger("controlplane.serving.models")


def move(row: models.Model, allowed: dict[str, frozenset[str]], new_state: str,
         changes: dict[str, Any], *, field: str = "state") -> bool:
    """Move `row` from the state it was read in to `new_state` with `changes`, if that move is
    allowed, as one conditional UPDATE: of two workers making the same move (with or without
    a row lock) exactly one wins. Returns whether this one did; only then is `row` changed."""
    old = getattr(row, field)
    if new_state == old or new_state not in allowed[old]:
        return False
    changes = {field: new_state, **changes}
    if type(row)._default_manager.filter(pk=row.pk, **{field: old}).update(**changes) != 1:
        return False
    for name, value in changes.items():
        setattr(row, name, value)
    log = logger.warning if new_state == "FAILED" else logger.info
    log("%s %s: %s -> %s%s", type(row).__name__, row.pk, old, new_state,
        f" ({changes['error_message']})" if changes.get("error_message") else "")
    return True
