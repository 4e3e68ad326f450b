"""Small helpers the rule modules share."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from vertexplan.catalog.errors import FieldError
from vertexplan.catalog.view import Field, JobView

Rule = Callable[[JobView], Iterable[FieldError]]

C_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def json_type(value: object) -> str:
    """The JSON name of a value's type, for 'must be a string, got a number'."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def short(value: object, limit: int = 60) -> str:
    """repr() cut to a length that fits in a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def wrong_type(f: Field, expected: str, example: str = "") -> FieldError:
    hint = f" (e.g. {example})" if example else ""
    return FieldError(f.path, f"{f.path} must be {expected}{hint}, got {json_type(f.raw)}")


def string_list_errors(f: Field, what: str) -> Iterable[FieldError]:
    """Errors for a field that must be a list of strings (command, args, packageUris)."""
    if not f.present:
        return
    if not isinstance(f.raw, list):
        yield wrong_type(f, f"a list of strings ({what})")
        return
    for i, value in enumerate(f.raw):
        if not isinstance(value, str):
            yield FieldError(
                f"{f.path}[{i}]",
                f"{f.path}[{i}] must be a string, got {json_type(value)}",
                (str(value),) if isinstance(value, int | float) else (),
            )
