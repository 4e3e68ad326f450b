"""`make demo` builds what its own presets run in: a PyTorch/XLA job needs `.venv/xla`, a Triton
packaging job `.venv/triton`, a DeepSpeed job the prebuilt ops. Without them the compose page
would call such a job valid and the emulator would fail it at once (issue: "Valid then failed").
Read from make's own plan of the target (a dry run that remakes everything prints every step)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_make_demo_builds_the_environments_its_presets_need() -> None:
    plan = subprocess.run(["make", "--dry-run", "--always-make", "demo"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=True).stdout
    steps = plan.splitlines()
    demo = next(i for i, line in enumerate(steps) if "-m config.demo" in line)
    before = "\n".join(steps[:demo])
    for environment in (".venv/xla/.installed", ".venv/triton/.installed"):
        assert f"touch {environment}" in before, (environment, plan[-3000:])
    # The DeepSpeed op: built once per machine beside the dependencies, linked into .venv.
    built = [line for line in steps[:demo] if "ShareMemCommBuilder().load()" in line
             and "touch $partial/.built" in "\n".join(steps[:demo])]
    linked = [line for line in steps[:demo] if line.startswith("ln -sfn ")
              and line.endswith("-torch-extensions .venv/torch-extensions")]
    assert built and linked, plan[-3000:]


def test_the_suite_and_the_demo_compile_the_project_once_and_keep_it_compiled() -> None:
    """With PYTHONDONTWRITEBYTECODE set (some machines and images set it), every process of a
    run would compile the project's sources again; make unsets it for its recipes and compiles
    the project's packages before the suite and the demo."""
    probe = subprocess.run(
        ["make", "--no-print-directory", "--eval",
         "probe-bytecode: ; @echo \"[$$PYTHONDONTWRITEBYTECODE]\"", "probe-bytecode"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}).stdout
    assert probe.strip() == "[]", probe
    for target, runs in (("test", "-m pytest"), ("test-fast", "-m pytest"),
                         ("demo", "-m config.demo")):
        steps = subprocess.run(["make", "--dry-run", "--always-make", target], cwd=ROOT,
                               capture_output=True, text=True, timeout=60,
                               check=True).stdout.splitlines()
        start = next(i for i, line in enumerate(steps) if runs in line)
        compiled = [line for line in steps[:start] if "-m compileall" in line]
        assert compiled and all(package in compiled[-1] for package in
                                ("controlplane", "localvertex", "trainers", "vertexplan")), (
            target, steps[max(0, start - 5):start + 1])
