"""Where this process sits in the job: rank, world size, master address, device.

Three sources, in this order:
1. RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT (LOCAL_RANK, LOCAL_WORLD_SIZE optional): set by
   torchrun and by the local Vertex emulator.
2. CLUSTER_SPEC: what a Vertex AI replica gets. Trainer ranks are the replicas of workerpool0
   then workerpool1, in order; the master is workerpool0[0]. workerpool2 (Reduction Server or
   parameter servers) and workerpool3 (evaluators) are not trainer ranks.
3. Neither: one process, world size 1.

A replica with several GPUs runs one process per GPU: the environment then describes the
replica (a "node"), and the PyTorch trainer starts the processes through torchrun
(trainers/torch/distributed.py). The derivation is pure (a mapping in, a dataclass out) so it
can be tested without a cluster, and serves every trainer (the JAX one reads its hosts from it).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Mapping
from dataclasses import dataclass

TRAINER_POOLS = ("workerpool0", "workerpool1")
NON_TRAINER_POOLS = {
    "workerpool2": "workerpool2 runs the Reduction Server or parameter servers",
    "workerpool3": "workerpool3 runs evaluators",
}
TORCHRUN_VARS = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


class ClusterError(ValueError):
    """The environment describes an impossible or incomplete cluster."""


class NotATrainer(Exception):
    """This replica belongs to a pool that runs no trainer."""

    def __init__(self, task_type: str, reason: str) -> None:
        super().__init__(reason)
        self.task_type = task_type
        self.reason = reason


@dataclass(frozen=True)
class Node:
    """One machine (a Vertex replica) of the job."""

    node_rank: int
    num_nodes: int
    master_addr: str
    master_port: int
    source: str  # "env", "cluster_spec" or "single"


@dataclass(frozen=True)
class Process:
    """One training process (one per device)."""

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int
    master_addr: str
    master_port: int
    source: str

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def node_from_cluster_spec(spec: Mapping) -> Node:
    """Derive the node from Vertex's CLUSTER_SPEC (already parsed)."""
    cluster = spec.get("cluster") or {}
    task = spec.get("task") or {}
    task_type = task.get("type")
    if task_type in NON_TRAINER_POOLS:
        raise NotATrainer(task_type, NON_TRAINER_POOLS[task_type])
    if task_type not in TRAINER_POOLS:
        raise ClusterError(f"CLUSTER_SPEC task type {task_type!r} is not a worker pool")
    raw_index = task.get("index", 0)
    try:
        index = int(raw_index)
    except (TypeError, ValueError):
        raise ClusterError(f"CLUSTER_SPEC task index {raw_index!r} is not a number") from None
    chiefs = list(cluster.get("workerpool0") or [])
    workers = list(cluster.get("workerpool1") or [])
    if not chiefs:
        raise ClusterError("CLUSTER_SPEC has no workerpool0 replica to act as master")
    pool = chiefs if task_type == "workerpool0" else workers
    if not 0 <= index < len(pool):
        raise ClusterError(f"CLUSTER_SPEC task {task_type}[{index}] is not in the cluster")
    addr, port = _split_host_port(chiefs[0])
    node_rank = index if task_type == "workerpool0" else len(chiefs) + index
    return Node(node_rank, len(chiefs) + len(workers), addr, port, "cluster_spec")


def node_from_env(env: Mapping[str, str]) -> Node:
    """The node this process runs on, before any per-device processes are started."""
    process = process_from_env(env)
    return Node(
        process.rank, process.world_size, process.master_addr, process.master_port, process.source
    )


def process_from_env(env: Mapping[str, str]) -> Process:
    """Rank and world of this process from torchrun/emulator variables, CLUSTER_SPEC, or neither.

    CLUSTER_SPEC naming a non-trainer pool wins over everything: such a replica must not join
    the process group even if something also set RANK for it.
    """
    spec = _parse_cluster_spec(env.get("CLUSTER_SPEC"))
    if spec is not None:
        task_type = (spec.get("task") or {}).get("type")
        if task_type in NON_TRAINER_POOLS:
            raise NotATrainer(task_type, NON_TRAINER_POOLS[task_type])
    present = [name for name in TORCHRUN_VARS if env.get(name)]
    if present:
        if len(present) != len(TORCHRUN_VARS):
            missing = sorted(set(TORCHRUN_VARS) - set(present))
            raise ClusterError(f"{', '.join(present)} set but {', '.join(missing)} missing")
        rank, world = _int(env, "RANK"), _int(env, "WORLD_SIZE")
        local_rank = _int(env, "LOCAL_RANK", 0)
        local_world = _int(env, "LOCAL_WORLD_SIZE", 1)
        if not 0 <= rank < world:
            raise ClusterError(f"RANK {rank} is outside WORLD_SIZE {world}")
        if not 0 <= local_rank < local_world:
            raise ClusterError(f"LOCAL_RANK {local_rank} is outside LOCAL_WORLD_SIZE {local_world}")
        port = _int(env, "MASTER_PORT")
        return Process(rank, world, local_rank, local_world, env["MASTER_ADDR"], port, "env")
    if spec is not None:
        node = node_from_cluster_spec(spec)
        return Process(
            node.node_rank, node.num_nodes, 0, 1, node.master_addr, node.master_port, node.source
        )
    return Process(0, 1, 0, 1, "127.0.0.1", 0, "single")


def free_port() -> int:
    """A port that was free a moment ago (for local runs and tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _parse_cluster_spec(raw: str | None) -> dict | None:
    if not raw:
        return None
    try:
        spec = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ClusterError(f"CLUSTER_SPEC is not valid JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise ClusterError("CLUSTER_SPEC is not a JSON object")
    return spec


def _split_host_port(address: str) -> tuple[str, int]:
    host, sep, port = str(address).rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ClusterError(f"CLUSTER_SPEC address {address!r} is not host:port")
    return host.strip("[]"), int(port)


def _int(env: Mapping[str, str], name: str, default: int | None = None) -> int:
    raw = env.get(name)
    if raw in (None, "") and default is not None:
        return default
    try:
        return int(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ClusterError(f"{name}={raw!r} is not a number") from None
