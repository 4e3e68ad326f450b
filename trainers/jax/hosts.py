"""Which hosts a JAX run spans, from what the environment says. Pure: a mapping in, a plan out.

A TPU slice of more than one VM runs one process per VM, and they must meet through
`jax.distributed.initialize` before anything touches a device. What Vertex gives a TPU VM is
UNCONFIRMED (VERTEX_FACTS.md, A5), so every source that may describe the hosts is read, the
most explicit first, and a single host is assumed only when none of them says otherwise:

1. JAX_COORDINATOR_ADDRESS, JAX_NUM_PROCESSES, JAX_PROCESS_ID: set by hand or by a launcher.
2. TPU_WORKER_HOSTNAMES (comma-separated) and TPU_WORKER_ID: what Cloud TPU VMs (and the local
   emulator) carry; one name means one host. The coordinator is the first host, on
   JAX_COORDINATOR_PORT (default 8476; hosts that share one address need a port of their own).
3. CLUSTER_SPEC with more than one trainer replica: the replicas are the hosts, workerpool0[0]
   the coordinator (as for the PyTorch trainer).
4. CLUSTER_SPEC whose job asks for a TPU topology larger than one VM, with nothing above:
   `jax.distributed.initialize()` without arguments, which asks the TPU VM's metadata itself.
5. Otherwise one host: no initialisation at all (it would wait for peers that never come).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from trainers.job.cluster import ClusterError, node_from_cluster_spec

# jax.distributed's own default coordinator port on Cloud TPU; JAX_COORDINATOR_PORT overrides it.
COORDINATOR_PORT = 8476
PORT_ENV = "JAX_COORDINATOR_PORT"
_CHIPS_PER_VM = re.compile(r"-(\d+)t$")  # ct5lp-hightpu-4t, ct6e-standard-8t


@dataclass(frozen=True)
class HostPlan:
    """How this process joins the others (`auto`: jax finds out; `single`: it does not)."""

    kind: str  # "single", "explicit" or "auto"
    source: str  # which variables said so
    coordinator: str | None = None  # host:port
    num_processes: int = 1
    process_id: int = 0

    def initialize_kwargs(self) -> dict[str, object]:
        if self.kind != "explicit":
            return {}
        return {
            "coordinator_address": self.coordinator,
            "num_processes": self.num_processes,
            "process_id": self.process_id,
        }


def host_plan(env: Mapping[str, str]) -> HostPlan:
    explicit = _from_jax_vars(env)
    if explicit:
        return explicit
    tpu = _from_tpu_vars(env)
    if tpu:
        return tpu
    spec = _cluster_spec(env)
    if spec is not None:
        node = node_from_cluster_spec(spec)
        if node.num_nodes > 1:
            return HostPlan(
                "explicit",
                "CLUSTER_SPEC",
                f"{_url_host(node.master_addr)}:{_port(env)}",
                node.num_nodes,
                node.node_rank,
            )
        vms = tpu_vms(spec)
        if vms > 1:
            return HostPlan("auto", f"CLUSTER_SPEC (a TPU topology of {vms} VMs)", None, vms, 0)
    return HostPlan("single", "no multi-host variables")


def tpu_vms(spec: Mapping) -> int:
    """VMs of the TPU slice the job's first pool asks for: chips of the topology divided by the
    chips of one VM (the machine type's `-Nt` suffix); 1 when the spec does not say."""
    pools = ((spec.get("job") or {}).get("worker_pool_specs") or [{}])
    machine = (pools[0] or {}).get("machine_spec") or {}
    topology = str(machine.get("tpu_topology") or "")
    match = _CHIPS_PER_VM.search(str(machine.get("machine_type") or ""))
    if not topology or not match:
        return 1
    try:
        chips = math.prod(int(part) for part in topology.lower().split("x"))
    except ValueError:
        return 1
    return max(1, chips // int(match.group(1)))


def _from_jax_vars(env: Mapping[str, str]) -> HostPlan | None:
    names = ("JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID")
    present = [n for n in names if env.get(n)]
    if not present:
        return None
    if len(present) != len(names):
        missing = sorted(set(names) - set(present))
        raise ClusterError(f"{', '.join(present)} set but {', '.join(missing)} missing")
    count, index = _int(env, "JAX_NUM_PROCESSES"), _int(env, "JAX_PROCESS_ID")
    _check_index(index, count, "JAX_PROCESS_ID", "JAX_NUM_PROCESSES")
    if count == 1:
        return HostPlan("single", "JAX_NUM_PROCESSES=1")
    return HostPlan("explicit", "JAX_* variables", env["JAX_COORDINATOR_ADDRESS"], count, index)


def _from_tpu_vars(env: Mapping[str, str]) -> HostPlan | None:
    hosts = [h.strip() for h in env.get("TPU_WORKER_HOSTNAMES", "").split(",") if h.strip()]
    if not hosts:
        return None
    if len(hosts) == 1:
        # Said outright, it wins over a topology in CLUSTER_SPEC (the emulator runs a whole
        # slice as one host).
        return HostPlan("single", "TPU_WORKER_HOSTNAMES names one host")
    index = _int(env, "TPU_WORKER_ID")
    _check_index(index, len(hosts), "TPU_WORKER_ID", "TPU_WORKER_HOSTNAMES")
    first = hosts[0]
    coordinator = first if _has_port(first) else f"{_url_host(first)}:{_port(env)}"
    return HostPlan("explicit", "TPU_WORKER_HOSTNAMES", coordinator, len(hosts), index)


def _cluster_spec(env: Mapping[str, str]) -> dict | None:
    raw = env.get("CLUSTER_SPEC")
    if not raw:
        return None
    try:
        spec = json.loads(raw)
    except ValueError as exc:
        raise ClusterError(f"CLUSTER_SPEC is not valid JSON: {exc}") from None
    if not isinstance(spec, dict):
        raise ClusterError("CLUSTER_SPEC is not a JSON object")
    return spec


def _check_index(index: int, count: int, index_name: str, count_name: str) -> None:
    if not 0 <= index < count:
        raise ClusterError(f"{index_name} {index} is outside the {count} hosts of {count_name}")


def _has_port(host: str) -> bool:
    head, sep, port = host.rpartition(":")
    return bool(sep and head and port.isdigit() and not head.endswith(":"))


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _port(env: Mapping[str, str]) -> int:
    return _int(env, PORT_ENV) if env.get(PORT_ENV) else COORDINATOR_PORT


def _int(env: Mapping[str, str], name: str) -> int:
    raw = env.get(name, "")
    try:
        return int(raw)
    except ValueError:
        raise ClusterError(f"{name}={raw!r} is not a number") from None
