"""Run the real trainer as child processes, the way torchrun, Vertex or the emulator would.

Each child's stdout is read by a thread as it comes, so a test can wait for an event (with a
deadline) and then act, e.g. send SIGTERM mid-run. Every wait is bounded, and children still
running when a helper gives up are killed.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from config.ports import reserve_port

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 90
# Variables a developer's shell (or a Vertex container) may carry that would change a run.
CLUSTER_VARS = (
    "RANK",
    "WORLD_SIZE",
    "LOCAL_RANK",
    "LOCAL_WORLD_SIZE",
    "MASTER_ADDR",
    "MASTER_PORT",
    "CLUSTER_SPEC",
    "TF_CONFIG",
    "AIP_CHECKPOINT_DIR",
    "AIP_MODEL_DIR",
    "TORCHELASTIC_RUN_ID",
    "GROUP_RANK",
    "ROLE_RANK",
    "CP_DEEPSPEED_CONFIG_JSON",
    "CP_FSDP_CONFIG_JSON",
    "CP_PARALLELISM_JSON",
    # A job carries these only when its team tracks runs in W&B (trainers/job/tracking.py).
    "WANDB_PROJECT",
    "WANDB_ENTITY",
    "WANDB_API_KEY",
    "WANDB_MODE",
    "WANDB_DIR",
    "WANDB_BASE_URL",
)


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLUSTER_VARS}
    env["PYTHONPATH"] = str(ROOT)
    env["OMP_NUM_THREADS"] = "1"
    env["CUDA_VISIBLE_DEVICES"] = ""  # these tests cover the CPU path
    # Should DeepSpeed ever compile an op, it goes to the project's cache, not $HOME.
    env["TORCH_EXTENSIONS_DIR"] = str(ROOT / "var" / "torch_extensions")
    env.update(extra)
    return env


@dataclass
class Result:
    returncode: int
    events: list[dict]
    stdout_lines: list[str]
    stderr: str

    def of(self, name: str) -> list[dict]:
        return [e for e in self.events if e.get("event") == name]

    def one(self, name: str) -> dict:
        found = self.of(name)
        assert len(found) == 1, f"expected one {name!r} event, got {found}\n{self.stderr[-3000:]}"
        return found[0]

    def losses(self) -> dict[int, float]:
        return {e["step"]: e["loss"] for e in self.of("step")}


@dataclass
class Replica:
    """One trainer process with its stdout parsed into events as they arrive."""

    process: subprocess.Popen
    lines: list[str] = field(default_factory=list)
    events: list[dict] = field(default_factory=list)
    arrivals: queue.Queue = field(default_factory=queue.Queue)
    stderr: list[str] = field(default_factory=list)
    readers: list[threading.Thread] = field(default_factory=list)

    @classmethod
    def start(
        cls, args: Sequence[str], env: dict[str, str], module: str = "trainers.train",
        python: str = sys.executable,
    ) -> Replica:
        """`python`: another environment's interpreter (the PyTorch/XLA trainer has its own)."""
        process = subprocess.Popen(
            [python, "-m", module, *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        replica = cls(process)
        replica.readers = [
            threading.Thread(target=replica._read_stdout, daemon=True),
            threading.Thread(target=replica._read_stderr, daemon=True),
        ]
        for reader in replica.readers:
            reader.start()
        return replica

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr.extend(self.process.stderr)

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            if line.startswith("{"):
                event = json.loads(line)
                self.events.append(event)
                self.arrivals.put(event)

    def wait_for(self, predicate: Callable[[dict], bool], timeout: float = TIMEOUT_S) -> dict:
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                event = self.arrivals.get(timeout=min(left, 0.5))
            except queue.Empty:
                if self.process.poll() is not None and self.arrivals.empty():
                    break
                continue
            if predicate(event):
                return event
        raise AssertionError(f"no matching event; exit {self.process.poll()}, got {self.events}")

    def finish(self, timeout: float = TIMEOUT_S) -> Result:
        try:
            self.process.wait(timeout=timeout)
        finally:
            self.kill()
        for reader in self.readers:
            reader.join(timeout=10)  # the pipes close when the process ends
        stderr = "".join(self.stderr)
        return Result(self.process.returncode, list(self.events), list(self.lines), stderr)

    def signal(self, sig: signal.Signals) -> None:
        self.process.send_signal(sig)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)


def train(args: Sequence[str], timeout: float = TIMEOUT_S, **env: str) -> Result:
    """One trainer process, as `python -m trainers.train` (world size 1 unless env says)."""
    return Replica.start(args, child_env(**env)).finish(timeout)


def start_world(
    args: Sequence[str], world_size: int = 2, module: str = "trainers.train", **extra: str
) -> list[Replica]:
    """`world_size` processes joined through RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT, as the
    local Vertex emulator starts replicas."""
    port = str(reserve_port())
    replicas: list[Replica] = []
    try:
        for rank in range(world_size):
            env = child_env(
                RANK=str(rank),
                WORLD_SIZE=str(world_size),
                MASTER_ADDR="127.0.0.1",
                MASTER_PORT=port,
                **extra,
            )
            replicas.append(Replica.start(args, env, module))
    except BaseException:
        stop_all(replicas)
        raise
    return replicas


def finish_all(replicas: list[Replica], timeout: float = TIMEOUT_S) -> list[Result]:
    try:
        return [r.finish(timeout) for r in replicas]
    finally:
        stop_all(replicas)


def train_world(args: Sequence[str], world_size: int = 2) -> list[Result]:
    return finish_all(start_world(args, world_size))


def stop_all(replicas: list[Replica]) -> None:
    for replica in replicas:
        replica.kill()


def assert_losses_close(actual: dict[int, float], expected: dict[int, float], rel: float) -> None:
    assert actual, "no step events"
    for step, loss in actual.items():
        assert step in expected, f"step {step} missing from the reference"
        assert abs(loss - expected[step]) <= rel * abs(expected[step]), (
            f"step {step}: {loss} vs {expected[step]}"
        )
