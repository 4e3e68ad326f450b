"""What each replica runs and the environment it runs in, as a Vertex replica would see it.

See VERTEX_FACTS.md section 4: CLUSTER_SPEC and TF_CONFIG describe the cluster, AIP_*_DIR come
from base_output_directory, CLOUD_ML_* name the job. MASTER_ADDR/PORT, RANK and WORLD_SIZE are
derived from CLUSTER_SPEC the way PyTorch containers do: rank 0 is the chief (workerpool0-0),
workers follow; parameter servers and evaluators take no rank.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from google.protobuf import json_format

from localvertex.config import Settings
from localvertex.replicas.python_packages import import_paths
from localvertex.replicas.sandbox import replica_environment
from localvertex.replicas.storage import local_path

LOCALHOST = "127.0.0.1"
TF_TASK_TYPES = ("chief", "worker", "ps", "evaluator")

# Variables a replica must get only from the emulator, never inherited from the shell that
# started it (a stale RANK or TF_CONFIG would silently change what the replica does).
_INHERITED_DROPPED = re.compile(
    r"^(AIP_.*|CLOUD_ML_.*|LOCALVERTEX_.*|CLUSTER_SPEC|TF_CONFIG|RANK|WORLD_SIZE|LOCAL_RANK"
    r"|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT|GROUP_RANK|ROLE_RANK|TORCHELASTIC_.*)$"
)
_REFERENCE = re.compile(r"\$(\$|\(([A-Za-z_][A-Za-z0-9_]*)\))")
# TPU VM machine types: v5e (ct5lp-hightpu-Nt), v6e (ct6e-standard-Nt), v5p (ct5p-hightpu-Nt).
_TPU_MACHINE = re.compile(r"^(?:ct5lp-hightpu|ct6e-standard|ct5p-hightpu)-(\d+)t$")

# Markers that let the emulator recognise its own replicas (and their children) later, e.g. to
# kill those left behind by an emulator that was killed (see processes.py).
ENV_DATA_DIR = "LOCALVERTEX_DATA_DIR"
ENV_JOB_ID = "LOCALVERTEX_JOB_ID"
ENV_TASK = "LOCALVERTEX_TASK"
# The PyTorch/XLA environment's interpreter (`make xla-env`: torch_xla pins its own torch).
ENV_XLA_PYTHON = "LOCALVERTEX_XLA_PYTHON"
PJRT_DEVICE = "PJRT_DEVICE"
# The Triton tools environment's interpreter (`make triton-env`): what the Triton tools image
# (Dockerfile.triton-tools) holds for a triton model's packaging job, apart from the
# project's environment because its pins differ (requirements-triton.txt).
ENV_TRITON_PYTHON = "LOCALVERTEX_TRITON_PYTHON"
TRITON_TOOLS_MODULE = "trainers.serving.triton_package"


@dataclass(frozen=True)
class ReplicaSpec:
    pool: int
    index: int
    task_name: str
    port: int
    argv: list[str]
    env: dict[str, str]
    # Which VM of the replica's TPU slice this process plays (0 for every other replica): a
    # slice of several VMs runs one process per VM, all under the replica's task name.
    host: int = 0

    @property
    def key(self) -> str:
        """The process's own name (its pid file, its record): the task, and its host."""
        return self.task_name if self.host == 0 else f"{self.task_name}.host{self.host}"


def task_name(pool: int, index: int) -> str:
    return f"workerpool{pool}-{index}"


def expand_references(value: str, env: dict[str, str]) -> str:
    """Kubernetes-style `$(VAR)` expansion as Vertex applies it to env values.

    `$(VAR)` becomes VAR's value when VAR is defined and stays as written otherwise; `$$` is an
    escaped `$`, so `$$(VAR)` yields the literal `$(VAR)`.
    """

    def replace(m: re.Match[str]) -> str:
        if m.group(1) == "$":
            return "$"
        name = m.group(2)
        return env.get(name, m.group(0))

    return _REFERENCE.sub(replace, value)


def free_ports(count: int) -> list[int]:
    """`count` distinct ports free right now (all sockets held open until every port is chosen)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((LOCALHOST, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def replica_argv(pool_spec, python: str = sys.executable) -> list[str]:  # WorkerPoolSpec
    if pool_spec.WhichOneof("task") == "python_package_spec":
        pkg = pool_spec.python_package_spec
        argv = ["python", "-m", pkg.python_module, *pkg.args]
    else:
        spec = pool_spec.container_spec
        # With no command the image's entrypoint would run; locally there is no image, so the
        # args are taken as the command line.
        argv = [*spec.command, *spec.args] if spec.command else list(spec.args)
    if argv and argv[0] in ("python", "python3"):
        argv[0] = python
    return argv


def xla_python() -> Path:
    """Where a PyTorch/XLA replica's `python` is: $LOCALVERTEX_XLA_PYTHON, else the .venv/xla
    inside the emulator's own virtual environment (`make xla-env` builds it there)."""
    given = os.environ.get(ENV_XLA_PYTHON)
    return Path(given) if given else Path(sys.prefix) / "xla" / "bin" / "python"


def triton_python() -> Path:
    """Where the Triton tools' `python` is: $LOCALVERTEX_TRITON_PYTHON, else the .venv/triton
    inside the emulator's own virtual environment (`make triton-env`)."""
    given = os.environ.get(ENV_TRITON_PYTHON)
    return Path(given) if given else Path(sys.prefix) / "triton" / "bin" / "python"


def runs_triton_tools(pool_spec) -> bool:
    argv = replica_argv(pool_spec)
    return argv[1:3] == ["-m", TRITON_TOOLS_MODULE]


def runs_pytorch_xla_on_tpu(pool_spec, env: dict[str, str]) -> bool:
    return env.get(PJRT_DEVICE) == "TPU" and tpu_slice_chips(pool_spec.machine_spec) is not None


def _play_xla_tpu_on_cpu(pool_spec, env: dict[str, str]) -> str:
    """PyTorch/XLA asking PJRT for the TPU gets the CPU instead, one PJRT device per chip of
    the slice (as JAX gets them in tpu_env), in its own environment; returns its python."""
    env[PJRT_DEVICE] = "CPU"
    env["CPU_NUM_DEVICES"] = str(tpu_slice_chips(pool_spec.machine_spec))
    return str(xla_python())


def job_spec_dict(job_spec) -> dict:
    return json_format.MessageToDict(job_spec, preserving_proto_field_name=True)


def storage_env(settings: Settings) -> dict[str, str]:
    """Google's storage client and gcsfs reach the emulator's Cloud Storage here: the job's
    door in its namespace, the same address as the host's port (storage/doors.py)."""
    if not settings.storage_port:
        return {}
    return {"STORAGE_EMULATOR_HOST": f"http://{LOCALHOST}:{settings.storage_port}"}


def output_dirs(settings: Settings, job_spec) -> dict[str, str]:
    base = job_spec.base_output_directory.output_uri_prefix
    if not base:
        return {}
    root = local_path(settings.data_dir, base).rstrip("/")
    return {
        "AIP_MODEL_DIR": f"{root}/model/",
        "AIP_CHECKPOINT_DIR": f"{root}/checkpoints/",
        "AIP_TENSORBOARD_LOG_DIR": f"{root}/logs/",
    }


def build_replicas(
    *,
    settings: Settings,
    project: str,
    job_id: str,
    job_spec,  # aiplatform.v1 CustomJobSpec (protobuf)
    ports: dict[str, int] | None = None,
    base_env: dict[str, str] | None = None,
) -> list[ReplicaSpec]:
    """One ReplicaSpec per replica of every non-empty pool, in pool then index order.

    `ports` keeps each task's port across restarts (a restarted Vertex replica keeps its VM and
    hostname); tasks without one get a fresh free port.
    """
    tasks = [
        (pool, index)
        for pool, pool_spec in enumerate(job_spec.worker_pool_specs)
        for index in range(pool_spec.replica_count)
    ]
    known = _assign_ports(tasks, ports)
    cluster = _cluster_hosts(tasks, known)
    shared = {
        **_inherited_env(settings, base_env),
        **output_dirs(settings, job_spec),
    }
    spec_dict = job_spec_dict(job_spec)
    _add_packages(shared, settings, job_id, job_spec)
    replicas = []
    for pool, index in tasks:
        name = task_name(pool, index)
        pool_spec = job_spec.worker_pool_specs[pool]
        env = {
            **shared,
            **_cluster_env(cluster, pool, index, spec_dict),
            "CLOUD_ML_PROJECT_ID": project,
            "CLOUD_ML_JOB_ID": job_id,
            **_torch_env(cluster, pool, index),
            **tpu_env(pool_spec.machine_spec),
            **storage_env(settings),
            ENV_DATA_DIR: str(Path(settings.data_dir).absolute()),
            ENV_JOB_ID: job_id,
            ENV_TASK: name,
        }
        # The pool's own variables last, each expanded against everything set before it.
        for var in _task_spec(pool_spec).env:
            env[var.name] = expand_references(var.value, env)
        python = sys.executable
        hosts = tpu_hosts(pool_spec.machine_spec)
        if runs_pytorch_xla_on_tpu(pool_spec, env):
            python = _play_xla_tpu_on_cpu(pool_spec, env)
            hosts = 1  # torch_xla's CPU PJRT device has no multi-process start: one plays all
        elif runs_triton_tools(pool_spec) and triton_python().exists():
            # Without it the replica fails on its first import of onnx, naming it.
            python = str(triton_python())
        own = {var.name for var in _task_spec(pool_spec).env}
        for host in range(hosts):
            host_env = dict(env)
            if hosts > 1:
                host_env.update({k: v for k, v in tpu_host_env(
                    pool_spec.machine_spec, host, hosts, known[name]).items() if k not in own})
            replicas.append(
                ReplicaSpec(
                    pool=pool,
                    index=index,
                    task_name=name,
                    port=known[name],
                    argv=replica_argv(pool_spec, python),
                    env=host_env,
                    host=host,
                )
            )
    return replicas


def _add_packages(env: dict[str, str], settings: Settings, job_id: str, job_spec) -> None:
    """Put the pythonPackageSpec packages of every pool first on PYTHONPATH."""
    uris = [
        uri
        for pool_spec in job_spec.worker_pool_specs
        if pool_spec.WhichOneof("task") == "python_package_spec"
        for uri in pool_spec.python_package_spec.package_uris
    ]
    paths = import_paths(settings, job_id, dict.fromkeys(uris))
    if paths:
        env["PYTHONPATH"] = os.pathsep.join([*paths, env["PYTHONPATH"]])


def _assign_ports(tasks: list[tuple[int, int]], ports: dict[str, int] | None) -> dict[str, int]:
    """Each task's port: the one in `ports`, else a fresh free one."""
    known = dict(ports or {})
    missing = [task_name(p, i) for p, i in tasks if task_name(p, i) not in known]
    known.update(zip(missing, free_ports(len(missing)), strict=True))
    return known


def _cluster_hosts(tasks: list[tuple[int, int]], ports: dict[str, int]) -> dict[str, list[str]]:
    """CLUSTER_SPEC's `cluster`: each non-empty pool's replicas as host:port, by pool name."""
    cluster: dict[str, list[str]] = {}
    for pool, index in tasks:
        cluster.setdefault(f"workerpool{pool}", []).append(
            f"{LOCALHOST}:{ports[task_name(pool, index)]}"
        )
    return cluster


def _inherited_env(settings: Settings, base_env: dict[str, str] | None) -> dict[str, str]:
    """What every replica inherits from the emulator's environment (or `base_env`), less the
    variables only the emulator may set, with the working directory first on PYTHONPATH."""
    inherited = {
        k: v
        for k, v in replica_environment(
            dict(os.environ if base_env is None else base_env)).items()
        if not _INHERITED_DROPPED.match(k)
    }
    workdir = str(Path(settings.workdir).absolute())
    pythonpath = inherited.get("PYTHONPATH")
    inherited["PYTHONPATH"] = workdir + (os.pathsep + pythonpath if pythonpath else "")
    inherited["PYTHONUNBUFFERED"] = "1"
    return inherited


def _cluster_env(
    cluster: dict[str, list[str]], pool: int, index: int, spec_dict: dict
) -> dict[str, str]:
    """CLUSTER_SPEC and TF_CONFIG for replica `index` of pool `pool`."""
    tf_cluster = {
        TF_TASK_TYPES[int(name.removeprefix("workerpool"))]: hosts
        for name, hosts in cluster.items()
    }
    cluster_spec = {
        "cluster": cluster,
        "environment": "cloud",
        "task": {"type": f"workerpool{pool}", "index": index, "trial": ""},
        "job": spec_dict,
    }
    tf_config = {
        "cluster": tf_cluster,
        "task": {"type": TF_TASK_TYPES[pool], "index": index},
        "environment": "cloud",
        "job": spec_dict,
    }
    return {"CLUSTER_SPEC": json.dumps(cluster_spec), "TF_CONFIG": json.dumps(tf_config)}


def _torch_env(cluster: dict[str, list[str]], pool: int, index: int) -> dict[str, str]:
    """MASTER_ADDR/PORT, WORLD_SIZE and RANK as PyTorch containers derive them from
    CLUSTER_SPEC: workerpool0 then workerpool1 take ranks; other pools get no RANK."""
    chiefs = cluster.get("workerpool0", [])
    master = chiefs[0] if chiefs else f"{LOCALHOST}:0"
    host, port = master.rsplit(":", 1)
    env = {
        "MASTER_ADDR": host,
        "MASTER_PORT": port,
        "WORLD_SIZE": str(len(chiefs) + len(cluster.get("workerpool1", []))),
    }
    if pool == 0:
        env["RANK"] = "0"
    elif pool == 1:
        env["RANK"] = str(len(chiefs) + index)
    return env


def tpu_slice_chips(machine_spec) -> int | None:
    """Chips of the TPU slice a TPU VM machine type (ct5lp-hightpu-4t, ct6e-standard-8t) asks
    for: the tpu_topology's product ("2x4" = 8), or one VM's chips (the `-Nt` suffix) without a
    topology; None for other machines."""
    per_vm = _chips_per_vm(machine_spec)
    if per_vm is None:
        return None
    dims = [int(d) for d in machine_spec.tpu_topology.lower().split("x") if d.isdigit()]
    return math.prod(dims) if dims else per_vm


def tpu_env(machine_spec) -> dict[str, str]:
    """What a TPU VM's training process finds, played on the CPU, when one process plays the
    whole slice: JAX sees one CPU device per chip of the slice (XLA_FLAGS), and the TPU VM
    variables name one host (one host needs no `jax.distributed`). A slice of several VMs runs
    one process per VM instead, each with tpu_host_env over this; PyTorch/XLA's is still one
    process (its CPU PJRT device has no multi-process start). The job's own env entries
    still win."""
    slice_chips = tpu_slice_chips(machine_spec)
    if slice_chips is None:
        return {}
    topology = machine_spec.tpu_topology or "1x1"
    return {
        "JAX_PLATFORMS": "cpu",
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={slice_chips}",
        "TPU_WORKER_ID": "0",
        "TPU_WORKER_HOSTNAMES": LOCALHOST,
        "TPU_TOPOLOGY": topology,
        "TPU_CHIPS": str(slice_chips),
    }


def _chips_per_vm(machine_spec) -> int | None:
    match = _TPU_MACHINE.match(machine_spec.machine_type)
    return int(match.group(1)) if match else None


def tpu_hosts(machine_spec) -> int:
    """VMs of the TPU slice one replica asks for (the topology's chips over one VM's); 1 for
    a single-VM slice and for other machines."""
    chips, per_vm = tpu_slice_chips(machine_spec), _chips_per_vm(machine_spec)
    if chips is None or per_vm is None:
        return 1
    return max(chips // per_vm, 1)


def tpu_host_env(machine_spec, host: int, hosts: int, coordinator_port: int) -> dict[str, str]:
    """What host ``host`` of a slice of ``hosts`` VMs finds, over tpu_env's: its own chips as
    CPU devices, its TPU_WORKER_ID among the hosts' names, and where `jax.distributed` meets
    (host 0, on the replica's own port: every VM here is this machine, so each slice needs
    a port of its own)."""
    return {
        "XLA_FLAGS": f"--xla_force_host_platform_device_count={_chips_per_vm(machine_spec)}",
        "TPU_WORKER_ID": str(host),
        "TPU_WORKER_HOSTNAMES": ",".join([LOCALHOST] * hosts),
        "JAX_COORDINATOR_PORT": str(coordinator_port),
    }


def _task_spec(pool_spec):
    """The pool's python_package_spec or container_spec, whichever it has."""
    if pool_spec.WhichOneof("task") == "python_package_spec":
        return pool_spec.python_package_spec
    return pool_spec.container_spec
