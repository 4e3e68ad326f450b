"""A stack's processes do not outlive the process that started them (config/stack_guard.py):
killed with SIGKILL, the owner cannot stop them, and its guard does."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from config.devstack import ROOT

# The owner: a Stack whose only process is a long sleep, in a session of its own as every
# stack process is. It prints the sleep's pid, then waits to be killed.
OWNER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from config.devstack import Stack, StackConfig

    class Sleeper(Stack):
        def commands(self):
            return {"sleeper": [sys.executable, "-c", "import time; time.sleep(600)"]}

    stack = Sleeper(StackConfig(var_dir=Path(sys.argv[1]), database_url="", broker_url=""))
    print(stack.start_process("sleeper").pid, flush=True)
    time.sleep(600)
""")


def gone(pid: int, within_s: float) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A zombie is gone too: it only waits for its (new) parent to collect it.
        if Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z"):
            return True
        time.sleep(0.1)
    return False


def test_a_killed_owners_processes_are_stopped_by_its_guard(tmp_path: Path) -> None:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(tmp_path)], cwd=ROOT,
                             stdout=subprocess.PIPE, text=True)
    sleeper = int(owner.stdout.readline())
    try:
        assert not gone(sleeper, within_s=0.5), "the stack's process lives while its owner does"
        owner.send_signal(signal.SIGKILL)
        owner.wait(timeout=10)
        assert gone(sleeper, within_s=20), "the guard stopped the dead owner's process"
    finally:
        owner.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(sleeper, signal.SIGKILL)


def test_a_stopped_stack_stops_its_guard(tmp_path: Path) -> None:
    from config.devstack import Stack, StackConfig

    class Sleeper(Stack):
        def commands(self) -> dict[str, list[str]]:
            return {"sleeper": [sys.executable, "-c", "import time; time.sleep(600)"]}

    stack = Sleeper(StackConfig(var_dir=tmp_path, database_url="", broker_url=""))
    sleeper = stack.start_process("sleeper").pid
    guard = stack.guard.proc
    assert guard is not None and guard.poll() is None
    assert stack.guard_record.read_text().split() == [str(sleeper)]
    stack.stop_process("sleeper")
    assert stack.guard_record.read_text().split() == []
    stack.stop()
    assert guard.poll() is not None and stack.guard.proc is None
