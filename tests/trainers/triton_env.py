"""The Triton environment (`make triton-env`, requirements-triton.txt) for the tests that export,
validate or serve a Triton model repository: built when missing, never skipped."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.make_env import build

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv" / "triton"


def python() -> Path:
    """The Triton environment's interpreter, building the environment first if it is missing
    or older than its requirements (the Makefile's stamp decides)."""
    build("triton-env", timeout_s=1800)
    return VENV / "bin" / "python"


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """`python ARGS...` in the Triton environment, from the repository root (so `trainers` is
    importable without installing the project there)."""
    return subprocess.run([str(python()), *args], cwd=ROOT, capture_output=True, text=True,
                          check=check, timeout=600)


def last_json(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])
