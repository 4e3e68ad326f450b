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
# torchrun's --tee and local-ranks-filter put the rank before each line a worker prints.
_RANK_PREFIX = re.compile(r"^\[(?:rank|default)(\d+)\]:")


@dataclass(frozen=True)
class Recognized:
    """A line read as one of the contract's events."""

    event: str
    fields: dict[str, Any] = field(default_factory=dict)


def last_state(line: str) -> str:
    """Of a progress bar rewritten in place with carriage returns, its last state. A tqdm
    bar writes no newline until its end, so a whole epoch of updates arrives as one entry,
    far longer than MAX_LINE: only its last state is read."""
    if "\r" not in line:
        return line
    return line.rstrip("\r").rsplit("\r", 1)[-1]


def clean(line: str) -> str | None:
    """The line's last state without colour codes, surrounding blanks or a rank-0 prefix;
    None when too long to be read or printed by another rank."""
    line = last_state(line)
    if len(line) > MAX_LINE:
        return None
    if "\x1b" in line:
        line = _ANSI.sub("", line)
    line = line.strip()
    if line.startswith("["):
        prefix = _RANK_PREFIX.match(line)
        if prefix:
            # Rank 0's lines are the run's (as the contract's trainers print); every rank of
            # torchtitan logs its step line unless filtered: the others' would repeat them.
            if prefix.group(1) != "0":
                return None
            line = line[prefix.end():]
    return line


def number(text: str) -> float | None:
    """A finite number written as a framework prints it ("1,234", "5e-05"), else None."""
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def tag(name: str, versions: str) -> str:
    return f"{name}@{versions}"


# A tqdm bar's tail: "[00:05<00:06,  8.91it/s, v_num=0, train_loss=2.310]".
_BAR_RATE = re.compile(r"^\s*([0-9.]+)(it/s|s/it)$")
_BAR_PAIR = re.compile(r"^\s*([A-Za-z_][\w/.]*)=(\S+)$")


def read_bar_tail(tail: str, fields: dict[str, Any]) -> None:
    """Adds what a progress bar's tail shows (its text after the times) to `fields`: the step
    time from its rate and the first training loss of its postfix."""
    for part in tail.split(",")[1:]:
        rate = _BAR_RATE.match(part)
        if rate:
            value = number(rate.group(1))
            if value:
                fields["step_time_s"] = 1 / value if rate.group(2) == "it/s" else value
            continue
        pair = _BAR_PAIR.match(part)
        if pair and training_loss(pair.group(1)) and "loss" not in fields:
            fields["loss"] = number(pair.group(2))


def training_loss(key: str) -> bool:
    # A validation, evaluation or test loss shown on the same bar is no step's loss.
    return (key == "loss" or key.endswith("_loss")) and not key.startswith(
        ("val", "eval", "test"))
