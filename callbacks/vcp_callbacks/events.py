"""The control plane's events as a training process prints them: one JSON object per line on
stdout, flushed at once (a replica can be killed at any moment). The names and fields are the
contract the product's own trainers follow (its DESIGN.md, "Contract between trainers and the
control plane"): `event` names one, `severity` and `message` are lifted by Cloud Logging."""

from __future__ import annotations

import json
import math
import sys
from typing import Any, TextIO

# The reporter's name on run_started: what tells the control plane to read this process's
# events, and not its framework's own lines, as its steps.
REPORTER = "vcp-callbacks"


def _finite(value: Any) -> Any:
    """NaN and infinities as null (JSON has neither; the contract's numbers are nullable)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def emit(event: str, message: str, out: TextIO | None = None, **fields: Any) -> None:
    record = {"severity": "INFO", "message": message, "event": event, **fields}
    stream = out if out is not None else sys.stdout
    line = json.dumps(_finite(record), allow_nan=False, separators=(",", ":")) + "\n"
    # A live tqdm bar (Lightning's, on stdout) redraws without a newline: the event must not
    # be glued to its line, or Cloud Logging keeps it as text, not as the event.
    stream.write("\n" + line if _bar_is_drawn() else line)
    stream.flush()


def _bar_is_drawn() -> bool:
    tqdm = sys.modules.get("tqdm")
    bars = getattr(getattr(tqdm, "tqdm", None), "_instances", None)
    try:
        return bool(bars) and any(not getattr(bar, "disable", True) for bar in list(bars))
    except (TypeError, RuntimeError):  # the set changed while read: say yes, a blank costs less
        return True
