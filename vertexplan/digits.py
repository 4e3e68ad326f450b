"""Whole numbers read from text a person, a file or a query string wrote: ASCII digits only.

``str.isdigit()`` is true of superscripts and other digit-like characters ("²") that ``int()``
refuses, and ``int()`` reads other scripts' digits ("١٢") that no field means: a check and a
conversion that disagree were 500s. Every whole number parsed from text goes through
``ascii_int``.
"""

from __future__ import annotations

# 18 digits always fit a PostgreSQL bigint (an id, a step).
MAX_DIGITS = 18


def ascii_int(text: object, *, max_digits: int = MAX_DIGITS) -> int | None:
    """The int ``text`` spells in 1 to ``max_digits`` ASCII digits (no sign, no spaces);
    None for anything else, non-strings included."""
    if not isinstance(text, str) or not 1 <= len(text) <= max_digits:
        return None
    if not (text.isascii() and text.isdigit()):
        return None
    return int(text)
