"""The JAX trainer runs in child processes: XLA reads the host device count
(--xla_force_host_platform_device_count) once, at the first `import jax`, so each run gets its
own process with the devices its mesh needs. The runs share one persistent compilation cache
in the project's cache folder (var/, git-ignored): a resumed run reuses what the uninterrupted
run on the same mesh compiled, and a later test session what this one compiled. The files that
share the mesh runs are one group of tests/scheduling.py (trainers-jax-meshes): made once.
"""

from __future__ import annotations

import importlib.util
import os
import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import require
from tests.trainers.replicas import ROOT, Replica, Result, child_env

MODULE = "trainers.jax"
TIMEOUT_S = 300  # compiling a mesh's program takes tens of seconds on two busy cores
STEPS = 20
# fp32 on CPU: the loss must agree across meshes to 1e-4 (relative) over all 20 steps.
COMMON = ["--preset", "tiny", "--steps", str(STEPS), "--seed", "7", "--batch-size", "8",
          "--precision", "fp32"]
RUNTIME = ("jax", "jaxlib", "flax", "optax", "orbax.checkpoint")
MESHES = ("8,1,1", "2,4,1", "2,2,2")
CHECKPOINTED_MESH = "8,1,1"  # writes the checkpoints another mesh resumes from
INTERRUPTED_MESH = "2,2,2"
STOP_STEP = 5  # where the interrupted runs get their SIGTERM


@pytest.fixture(scope="session", autouse=True)
def jax_runtime() -> None:
    """Without the `jax` extra there is nothing to test: under CI that is a failure."""
    missing = [name for name in RUNTIME if importlib.util.find_spec(name) is None]
    require(not missing, f"the jax extra is not installed (missing {', '.join(missing)}); "
            "`make venv` installs it")


@pytest.fixture(scope="session")
def compile_cache() -> Path:
    # Keyed by the compiled program (and jax's version): an entry never serves another, so
    # `make test` keeps one per machine (TEST_JAX_CACHE_DIR, the Makefile's JAX_TEST_CACHE).
    cache = Path(os.environ.get("TEST_JAX_CACHE_DIR") or ROOT / "var" / "cache" / "jax")
    cache.mkdir(parents=True, exist_ok=True)
    return cache


def jax_env(devices: int, cache: Path, **extra: str) -> dict[str, str]:
    return child_env(
        JAX_PLATFORMS="cpu",
        XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}",
        JAX_COMPILATION_CACHE_DIR=str(cache),
        JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
        JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="0",
        **extra,
    )


def start_jax(args: Sequence[str], devices: int, cache: Path, **extra: str) -> Replica:
    return Replica.start([*COMMON, *args], jax_env(devices, cache, **extra), module=MODULE)


def train_jax(args: Sequence[str], devices: int, cache: Path, **extra: str) -> Result:
    result = start_jax(args, devices, cache, **extra).finish(TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    return result


@pytest.fixture(scope="session")
def single_device(compile_cache) -> Result:
    return train_jax(["--mesh", "1,1,1", "--eval-every", "0"], 1, compile_cache)


@pytest.fixture(scope="session")
def mesh_runs(compile_cache, tmp_path_factory) -> dict[str, tuple[Result, Path]]:
    """One uninterrupted run per mesh on 8 host devices; the first keeps its checkpoints (every
    10 steps, all kept) and evaluates."""
    runs = {}
    for mesh in MESHES:
        ckpt = tmp_path_factory.mktemp(f"mesh-{mesh.replace(',', 'x')}") / "ckpt"
        extra = ["--eval-every", "0"]
        if mesh == CHECKPOINTED_MESH:
            extra = ["--eval-every", "10", "--checkpoint-dir", str(ckpt),
                     "--checkpoint-every", "10", "--keep", "0"]
        runs[mesh] = (train_jax(["--mesh", mesh, *extra], 8, compile_cache), ckpt)
    return runs


@dataclass(frozen=True)
class Interrupted:
    stopped: Result  # SIGTERM during step 5: an emergency checkpoint, then `preempted`
    preempted: dict
    resumed: Result  # the same command again
    ckpt: Path


@pytest.fixture(scope="session")
def interrupted(compile_cache, tmp_path_factory) -> Interrupted:
    ckpt = tmp_path_factory.mktemp("interrupted") / "ckpt"
    args = ["--mesh", INTERRUPTED_MESH, "--eval-every", "0", "--checkpoint-dir", str(ckpt),
            "--checkpoint-every", "0"]
    # The run waits after step 5 until the signal comes: it stops at a known step, however fast
    # the machine (20 tiny steps take about a second).
    replica = start_jax(args, 8, compile_cache, TRAINERS_PAUSE_AT=f"step_end:{STOP_STEP}")
    try:
        replica.wait_for(lambda e: e.get("event") == "paused", TIMEOUT_S)
        replica.signal(signal.SIGTERM)
        preempted = replica.wait_for(lambda e: e.get("event") == "preempted", TIMEOUT_S)
    finally:
        stopped = replica.finish(TIMEOUT_S)
    return Interrupted(stopped, preempted, train_jax(args, 8, compile_cache), ckpt)
