"""Builds one of the Makefile's separate environments (xla-env, triton-env) for the tests that
need it. The suite runs on several processes (`make test`): a lock beside the environments lets
one of them build while the others wait, and make's stamp file turns their turn into a no-op."""

from __future__ import annotations

import fcntl
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCKS = ROOT / ".venv"


def build(target: str, *make_args: str, timeout_s: float) -> str:
    """`make TARGET MAKE_ARGS...` from the repository root, one process at a time; what it
    printed. A failed build fails the test with the end of its output."""
    LOCKS.mkdir(exist_ok=True)
    with open(LOCKS / f".{target}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(["make", "--no-print-directory", target, *make_args], cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout_s)
    assert done.returncode == 0, (f"make {target} failed:\n{done.stdout[-3000:]}\n"
                                  f"{done.stderr[-3000:]}")
    return done.stdout
