"""ascii_int: whole numbers from text in ASCII digits only (issue 40, door 12)."""

from __future__ import annotations

import pytest

from vertexplan.digits import ascii_int


@pytest.mark.parametrize("text, expected", [
    ("0", 0), ("42", 42), ("9" * 18, int("9" * 18)),
    ("\u00b2", None),  # superscript two: isdigit() is true, int() raises
    ("\u0661\u0662", None),  # Arabic-Indic 12: int() reads it, no field means it
    ("", None), (" 1", None), ("-1", None), ("+1", None), ("1.0", None), ("9" * 19, None),
    (7, None), (None, None),
])
def test_only_ascii_digits_make_a_number(text: object, expected: int | None) -> None:
    assert ascii_int(text) == expected


def test_the_digit_bound_is_the_callers() -> None:
    assert ascii_int("12", max_digits=2) == 12
    assert ascii_int("123", max_digits=2) is None
