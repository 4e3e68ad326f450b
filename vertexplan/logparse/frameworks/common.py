"""What every recognizer shares: the event it gives, how lines are cleaned and numbers read."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

# Longer lines are no framework's progress line (the longest, an HF Trainer dict with a
# dozen eval metrics, is under 1,000 characters): they are left as plain lines unread.
MAX_LINE = 2000
# ANSI SGR and other CSI sequences (torchtitan colours its step lines).
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class Recognized:
    """A line read as one of the contract's events."""

    event: str
    fields: dict[str, Any] = field(default_factory=dict)


def clean(line: str) -> str | None:
    """The line without colour codes and surrounding blanks; of a tqdm line rewritten in
    place (carriage returns), its last state; None when too long to be read."""
    if len(line) > MAX_LINE:
        return None
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    if "\r" in line:
        line = line.rstrip("\r").rsplit("\r", 1)[-1]
    return line.strip()


def number(text: str) -> float | None:
    """A finite number written as a framework prints it ("1,234", "5e-05"), else None."""
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def tag(name: str, versions: str) -> str:
    return f"{name}@{versions}"
