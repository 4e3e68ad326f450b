"""The PyTorch/XLA trainer runs in its own environment (.venv/xla, `make xla-env`): torch_xla
pins torch 2.9, the project runs torch 2.13. These tests build that environment when it is
missing (a fresh CI machine downloads torch 2.9 and torch_xla: minutes), then run
`python -m trainers.xla` in it on the CPU PJRT device as child processes, and the eager
PyTorch trainer (`python -m trainers.train`, this environment) as the reference.

Each XLA process compiles its step programs itself: torch_xla's persistent compilation cache
(XLA_PERSISTENT_CACHE_PATH) cannot serve the CPU PJRT client, which does not deserialize
executables ("Deserializing serialized executable not supported", torch_xla 2.9), so the runs
are kept few: one uninterrupted run per mesh, one interrupted run, and one interrupted pair of
hosts (the CPU PJRT client joins no other process, so two hosts meet as the launcher's
RANK/WORLD_SIZE say: trainers/xla/hosts.py) resumed by one host.
"""

from __future__ import annotations

import signal
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from config.ports import reserve_port
from tests.trainers.replicas import Replica, Result, child_env, finish_all, stop_all
from tests.xla_env import ensure_xla_env

MODULE = "trainers.xla"
TIMEOUT_S = 300  # XLA compiles each step's program (three of them) in tens of seconds on 2 cores
STEPS = 20
STOP_STEP = 5  # where the interrupted run gets its SIGTERM
# fp32 on CPU, no evaluation: the loss must agree with the eager run to 1e-4 (relative).
COMMON = ["--preset", "tiny", "--steps", str(STEPS), "--seed", "7", "--batch-size", "8",
          "--eval-every", "0"]


@pytest.fixture(scope="session")
def xla_python() -> Path:
    return ensure_xla_env()


# Most of a run's time here is XLA compiling its step programs, most of that LLVM optimising
# the CPU code: unoptimised, a run takes a third of the time (its losses move by ~1e-7).
FAST_COMPILE = "--xla_backend_optimization_level=0"


def xla_env(devices: int = 1, **extra: str) -> dict[str, str]:
    return child_env(PJRT_DEVICE="CPU", CPU_NUM_DEVICES=str(devices), XLA_FLAGS=FAST_COMPILE,
                     **extra)


def start_xla(python: Path, args: Sequence[str], devices: int = 1, **extra: str) -> Replica:
    return Replica.start([*COMMON, *args], xla_env(devices, **extra), module=MODULE,
                         python=str(python))


def train_xla(python: Path, args: Sequence[str], devices: int = 1, **extra: str) -> Result:
    result = start_xla(python, args, devices, **extra).finish(TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    return result


def train_eager(args: Sequence[str]) -> Result:
    result = Replica.start([*COMMON, "--strategy", "single", "--set", "device=cpu", *args],
                           child_env()).finish(TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-4000:]
    return result


@pytest.fixture(scope="session")
def eager_run() -> Result:
    return train_eager([])


@pytest.fixture(scope="session")
def xla_run(xla_python) -> Result:
    """One uninterrupted run on one CPU device: a single replica."""
    return train_xla(xla_python, [])


@dataclass(frozen=True)
class Interrupted:
    stopped: Result  # SIGTERM after step 5: an emergency checkpoint, then `preempted`
    preempted: dict
    resumed: Result  # the same command again
    ckpt: Path


@pytest.fixture(scope="session")
def interrupted(xla_python, tmp_path_factory) -> Interrupted:
    ckpt = tmp_path_factory.mktemp("xla-interrupted") / "ckpt"
    args = ["--checkpoint-dir", str(ckpt), "--checkpoint-every", "0"]
    # The run waits after step 5 until the signal comes, so it stops at a known step.
    replica = start_xla(xla_python, args, TRAINERS_PAUSE_AT=f"step_end:{STOP_STEP}")
    try:
        replica.wait_for(lambda e: e.get("event") == "paused", TIMEOUT_S)
        replica.signal(signal.SIGTERM)
        preempted = replica.wait_for(lambda e: e.get("event") == "preempted", TIMEOUT_S)
    finally:
        stopped = replica.finish(TIMEOUT_S)
    return Interrupted(stopped, preempted, train_xla(xla_python, args), ckpt)


@dataclass(frozen=True)
class TwoHosts:
    stopped: list[Result]  # host 1 alone got SIGTERM after step 5
    resumed: Result  # one host resuming the two hosts' checkpoint on the same mesh
    ckpt: Path


HOST_MESH = ["--mesh", "1,2"]  # each host's 2 CPU devices, the matrices split over fsdp
# Host 1 of the two-host run is a straggler: this many seconds more in every step.
SLOW_HOST_S = 0.3


def start_hosts(python: Path, args: Sequence[str], count: int, **host_1: str) -> list[Replica]:
    """`count` XLA hosts meeting through RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT (the CPU PJRT
    client sees no other process: trainers/xla/hosts.py); `host_1`: host 1's extra variables."""
    port = str(reserve_port())
    hosts: list[Replica] = []
    try:
        for rank in range(count):
            extra = host_1 if rank == 1 else {}
            hosts.append(start_xla(python, args, 2, RANK=str(rank), WORLD_SIZE=str(count),
                                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port, **extra))
    except BaseException:
        stop_all(hosts)
        raise
    return hosts


@pytest.fixture(scope="session")
def two_hosts(xla_python, tmp_path_factory) -> TwoHosts:
    ckpt = tmp_path_factory.mktemp("xla-two-hosts") / "ckpt"
    # Host 1 is slowed, and the hosts gather their own step times at every step (the one host
    # that resumes has no other to be slower than).
    args = [*HOST_MESH, "--checkpoint-dir", str(ckpt), "--checkpoint-every", "0",
            "--debug-slow-rank", "1", "--debug-slow-seconds", str(SLOW_HOST_S),
            "--set", "rank_times_every=1"]
    # Host 1 waits after step 5 until its signal comes; host 0 goes on to the step's stop flags
    # and waits there for host 1, so both stop at a known step.
    hosts = start_hosts(xla_python, args, 2, TRAINERS_PAUSE_AT=f"step_end:{STOP_STEP}")
    try:
        hosts[1].wait_for(lambda e: e.get("event") == "paused", TIMEOUT_S)
        hosts[1].signal(signal.SIGTERM)
    finally:
        stopped = finish_all(hosts, TIMEOUT_S)
    return TwoHosts(stopped, train_xla(xla_python, args, devices=2), ckpt)
