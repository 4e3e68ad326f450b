"""The generated client and the command line against the real stack, as a member of a team."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from config.devstack import Stack

# A gcloud `--config` CustomJobSpec, as `gcloud ai custom-jobs create --config` takes it: the
# built-in trainer for a few steps, so it succeeds in seconds on the emulator.
GCLOUD_YAML = """\
workerPoolSpecs:
  - machineSpec:
      machineType: n1-standard-4
    replicaCount: 1
    containerSpec:
      imageUri: us-docker.pkg.dev/my-project/trainers/trainer:1
      command: [python, -m, trainers.train]
      args: [--preset, tiny, --steps, "12", --checkpoint-every, "6"]
"""

# The same with an accelerator count the machine cannot take.
INVALID_GCLOUD_YAML = """\
workerPoolSpecs:
  - machineSpec:
      machineType: a2-highgpu-4g
      acceleratorType: NVIDIA_TESLA_A100
      acceleratorCount: 3
    replicaCount: 1
    containerSpec:
      imageUri: us-docker.pkg.dev/my-project/trainers/trainer:1
"""


@pytest.fixture(scope="session")
def member(stack: Stack) -> dict[str, Any]:
    """A member (submits and cancels, manages nothing) of the team `vision`."""
    return json.loads(stack.manage("seed_demo", "--username", "mia", "--team", "vision",
                                   "--role", "member", capture=True))


@pytest.fixture
def vcp(stack: Stack, member: dict[str, Any], tmp_path: Path
        ) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run the installed command line, with its config directory in a fresh temporary one."""
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "HOME": str(tmp_path),
           "PATH": str(Path(sys.executable).parent), "VCP_SERVER": stack.web_url,
           "VCP_TOKEN": member["token"]}

    def run(*args: str, stdin: str | None = None, login: bool = True,
            timeout: float = 300) -> subprocess.CompletedProcess[str]:
        run_env = dict(env) if login else {k: v for k, v in env.items() if k != "VCP_TOKEN"}
        return subprocess.run([sys.executable, "-m", "vcp.main", *args], env=run_env,
                              input=stdin, capture_output=True, text=True, timeout=timeout,
                              cwd=tmp_path)
    run.env = env  # type: ignore[attr-defined]
    return run
