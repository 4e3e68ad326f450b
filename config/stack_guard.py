"""Stops a stack whose owner died without stopping it.

config.devstack starts each of a stack's processes in a session of its own (so a signal reaches
a process and its children, and nothing the terminal sends), which also means they outlive the
process that started them: a test run killed at its time limit, or a demo killed with -9, would
leave an emulator, a worker and a beat sending tasks every second, burning CPU under whatever
runs next. This guard is started beside them as a child of the owner: when the owner is gone
(the guard's parent changes), it stops every process group the stack's record names.

    python config/stack_guard.py RECORD

RECORD holds one process-group id per line, rewritten by the owner as it starts and stops them.
Standard library only: it must start in a fraction of a second.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from pathlib import Path

POLL_S = 1.0
GRACE_S = 10.0


def groups(record: Path) -> list[int]:
    try:
        text = record.read_text()
    except OSError:
        return []
    return [int(line) for line in text.split() if line.isdigit() and int(line) > 1]


def alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def stop(pgids: list[int]) -> None:
    """SIGTERM to each group, SIGKILL to those still there after the grace period."""
    for pgid in pgids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and any(alive(p) for p in pgids):
        time.sleep(0.2)
    for pgid in pgids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signal.SIGKILL)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    record = Path(argv[0])
    owner = os.getppid()
    # The owner stops the guard with SIGTERM once it has stopped the stack itself; a Ctrl-C
    # at the terminal is the owner's to handle (it stops the stack), not the guard's.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while os.getppid() == owner:
        time.sleep(POLL_S)
    stop(groups(record))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
