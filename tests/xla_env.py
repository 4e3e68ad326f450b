"""The PyTorch/XLA trainer's own environment (.venv/xla), built by `make xla-env` when missing
or out of date (make's stamp file makes it a no-op otherwise). Tests that need it build it:
they are never skipped, as the trainer has no other way to run. On a fresh machine this
downloads torch 2.9 (with the CUDA libraries PyPI's Linux wheel depends on) and torch_xla:
minutes and about 5 GB."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.make_env import build

ROOT = Path(__file__).resolve().parents[1]
XLA_PYTHON = ROOT / ".venv" / "xla" / "bin" / "python"
BUILD_TIMEOUT_S = 1800


def ensure_xla_env() -> Path:
    """The .venv/xla interpreter, built with this interpreter's Python version."""
    printed = build("xla-env", f"PYTHON={sys.executable}", timeout_s=BUILD_TIMEOUT_S)
    assert XLA_PYTHON.exists(), printed
    return XLA_PYTHON
