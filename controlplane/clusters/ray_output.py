"""A Ray job's output as its cluster page shows it: text a person reads.

RayJob.logs keeps the output as Ray returned it, colours and all (the API answers it so); only
what the page shows is changed. Terminal escapes go (colours, cursor moves, window titles: a
browser would show them as `[32m` litter) and so do other control characters. A trainer's
event line, one JSON object (the event contract), shows as its `message` after Ray's worker
prefix, as Cloud Logging and the job page's log panel show it; its fields are the summary above
the output, the job page's charts and its searchable logs. The page shows the newest lines
only: the whole output is the API's and the job page's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from controlplane.clusters.ray_jobs import WORKER_PREFIX, event_in

SHOWN_LINES = 500
# CSI sequences (colours, cursor and erase: ESC [ ... final byte), OSC sequences (titles,
# links: ESC ] ... BEL or ESC \) and the two-byte ones (ESC and one byte).
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
# What is left of the C0 controls but the tab, and DEL: nothing a page can show.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass(frozen=True)
class Output:
    text: str  # the lines shown, one a line
    shown: int
    total: int

    @property
    def cut(self) -> bool:
        return self.shown < self.total


def readable(line: str) -> str:
    """LINE without terminal escapes and control characters; an event line as its message."""
    text = _CONTROL.sub("", _ESCAPE.sub("", line))
    prefix = WORKER_PREFIX.match(text)
    body_at = prefix.end() if prefix else 0
    event = event_in(text[body_at:])
    if event is None or not isinstance(event.get("message"), str) or not event["message"]:
        return text
    # What came before the object (Ray's worker prefix) stays; the object becomes its message.
    return text[:text.index("{", body_at)] + event["message"]


def for_page(raw: str, limit: int = SHOWN_LINES) -> Output:
    """The newest LIMIT lines of the output RAW, readable."""
    lines = raw.splitlines()
    shown = lines[-limit:] if limit else []
    return Output("\n".join(readable(line) for line in shown), len(shown), len(lines))
