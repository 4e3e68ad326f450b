"""`make demo` builds what its own presets run in: a PyTorch/XLA job needs `.venv/xla`, a Triton
packaging job `.venv/triton`, a DeepSpeed job the prebuilt ops. Without them the compose page
would call such a job valid and the emulator would fail it at once (issue: "Valid then failed").
Read from make's own plan of the target (a dry run that remakes everything prints every step)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_make_demo_builds_the_environments_its_presets_need() -> None:
    plan = subprocess.run(["make", "--dry-run", "--always-make", "demo"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True).stdout
    steps = plan.splitlines()
    demo = next(i for i, line in enumerate(steps) if "-m config.demo" in line)
    before = "\n".join(steps[:demo])
    for environment in (".venv/xla/.installed", ".venv/triton/.installed",
                        ".venv/torch-extensions.partial/.built"):
        assert f"touch {environment}" in before, (environment, plan[-3000:])
