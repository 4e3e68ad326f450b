"""Whether a log line or an error message says, in words, that a preemption happened or that its
SIGTERM arrived: "Spot VM preempted", "Replica workerpool0-0 was preempted, exit code 143",
"received SIGTERM", "preemption notice".

A word, not a substring: a job's own code prints names and text that hold the letters (an actor
class PreemptionWatcher, a handler was_preempted(), a link to .../preemptible-vms, a comment on
how it handles SIGTERM), and none of those is an event. The restart records (logs/restarts.py)
and the recovery of a failed attempt (runs/recovery.py) read lines with this one rule.
"""

from __future__ import annotations

import re

# Cheap to ask a database for (a superset of what says_preempted accepts), to narrow the lines
# read before the rule itself runs on them.
CANDIDATE = r"SIGTERM|preempt"

# Not inside a name, a path or a URL: no letter, digit, _, ., / or - on either side.
_ALONE_BEFORE = r"(?<![\w./-])"
_ALONE_AFTER = r"(?![\w./-])"
_SAYS = re.compile(
    _ALONE_BEFORE + r"(?:"
    r"preempted"
    r"|preemption\s+(?:notice|signal|event)"
    r"|(?:received|receives|got|caught|sent|sends|get|gets|by)\s+(?:a\s+|the\s+)?"
    r"(?:signal\s+)?SIGTERM"
    r"|SIGTERM\s+(?:received|caught|arrived)"
    r")" + _ALONE_AFTER,
    re.IGNORECASE,
)


def says_preempted(text: str) -> bool:
    return bool(_SAYS.search(text or ""))
