"""The replicas of one deployed model: local processes running the Model's container command.

Each replica gets the environment Vertex gives a custom prediction container (AIP_HTTP_PORT,
AIP_HEALTH_ROUTE, AIP_PREDICT_ROUTE, AIP_STORAGE_URI, ...) with two local differences: every
replica listens on a port of its own (on Vertex each has its VM and the container's first
port), and AIP_STORAGE_URI is the local folder standing in for the Model's artifact_uri (Vertex
hands the container a copy of it in a bucket of its own). A replica is ready once its health
route answers 200; one that exits is started again, as Vertex restarts a crashed container.
The deployment runs min_replica_count replicas: the emulator records autoscaling but does not
scale.

A deployment's replicas run as its model's team's user (team_users.py) in a network namespace
of the deployment's own (replicas/job_network.py: loopback only), so they are reached only
through the prediction service, never by another team's process on the machine (a job's
replica, a Ray node, another model's server): the emulator connects to them with sockets made
inside that namespace (ReplicaConnection). Where no namespace can be made (the emulator is
not root) they listen on the host's loopback, as before.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from localvertex.config import Settings
from localvertex.replicas import job_network
from localvertex.replicas.environment import (
    ENV_DATA_DIR,
    ENV_JOB_ID,
    ENV_TASK,
    LOCALHOST,
    expand_references,
    free_ports,
    storage_env,
    triton_python,
)
from localvertex.replicas.processes import signal_group
from localvertex.replicas.sandbox import (
    REPLICA_UMASK,
    Identity,
    SandboxError,
    popen_options,
    replica_environment,
    working_dir,
)
from localvertex.replicas.storage import local_path
from localvertex.replicas.team_users import identity_for, team_of
from localvertex.serving import vllm_local
from localvertex.serving.store import ModelPb
from localvertex.storage import doors

log = logging.getLogger(__name__)

TRITON_SERVER = "tritonserver"
TRITON_LOCAL_MODULE = "trainers.serving.triton_local"

_INHERITED_DROPPED = re.compile(
    r"^(AIP_.*|CLOUD_ML_.*|LOCALVERTEX_.*|CLUSTER_SPEC|TF_CONFIG|RANK|WORLD_SIZE|LOCAL_RANK"
    r"|LOCAL_WORLD_SIZE|MASTER_ADDR|MASTER_PORT)$"
)
_TICK_S = 0.2
_HEALTH_TIMEOUT_S = 2.0
_RESTART_BACKOFF_S = 1.0
# Vertex's metric names for DedicatedResources.autoscaling_metric_specs.
AUTOSCALING_METRICS = frozenset(
    {
        "aiplatform.googleapis.com/prediction/online/cpu/utilization",
        "aiplatform.googleapis.com/prediction/online/accelerator/duty_cycle",
    }
)


class ReplicaConnection(http.client.HTTPConnection):
    """HTTP to a replica's port in its deployment's namespace (NETNS; the host's when None)."""

    def __init__(self, port: int, netns: Path | None, timeout: float) -> None:
        super().__init__(LOCALHOST, port, timeout=timeout)
        self.netns = netns
        # http.client's one hook for how the socket is made (connect() keeps its NODELAY).
        self._create_connection = (
            lambda address, timeout, _source: job_network.connect_in(netns, address, timeout))


class DeployError(Exception):
    """The replicas did not become ready; the message carries the replicas' last lines."""


@dataclass
class _Replica:
    index: int
    port: int
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None
    ready: bool = False
    restarts: int = 0
    exited_at: float | None = None
    last_rc: int | None = None


@dataclass
class DeploymentSpec:
    """What a deployed model's replicas run: from the Model and the DeployedModel."""

    project: str
    endpoint_id: str
    deployed_model_id: str
    model: ModelPb  # type: ignore[valid-type]
    machine_type: str
    accelerator_type: str = ""
    env_extra: dict[str, str] = field(default_factory=dict)


def routes(spec: DeploymentSpec) -> tuple[str, str]:
    """(health, predict) routes: the container spec's, or Vertex's defaults."""
    container = spec.model.container_spec
    base = f"/v1/endpoints/{spec.endpoint_id}/deployedModels/{spec.deployed_model_id}"
    return container.health_route or base, container.predict_route or f"{base}:predict"


def namespace_id(endpoint_id: str, deployed_model_id: str) -> str:
    """What a deployment's network namespace is named after (job_network.name_for)."""
    return f"ep-{endpoint_id}-{deployed_model_id}"


def replica_env(
    settings: Settings, spec: DeploymentSpec, index: int, port: int, base_env: dict[str, str]
) -> dict[str, str]:
    health, predict = routes(spec)
    env = {k: v for k, v in base_env.items() if not _INHERITED_DROPPED.match(k)}
    workdir = str(Path(settings.workdir).absolute())
    pythonpath = env.get("PYTHONPATH")
    env["PYTHONPATH"] = workdir + (os.pathsep + pythonpath if pythonpath else "")
    env["PYTHONUNBUFFERED"] = "1"
    model = spec.model
    env.update(
        {
            "AIP_HTTP_PORT": str(port),
            "AIP_HEALTH_ROUTE": health,
            "AIP_PREDICT_ROUTE": predict,
            "AIP_STORAGE_URI": local_path(settings.data_dir, model.artifact_uri)
            if model.artifact_uri
            else "",
            "AIP_DEPLOYED_MODEL_ID": spec.deployed_model_id,
            "AIP_ENDPOINT_ID": spec.endpoint_id,
            "AIP_MODEL_NAME": model.name.rsplit("/", 1)[-1],
            "AIP_MACHINE_TYPE": spec.machine_type,
            "AIP_ACCELERATOR_TYPE": spec.accelerator_type,
            "AIP_MODE": "PREDICTION",
            "AIP_MODE_VERSION": "1.0.0",
            "AIP_FRAMEWORK": "CUSTOM_CONTAINER",
            "AIP_PROJECT_NUMBER": spec.project,
            **storage_env(settings),
            ENV_DATA_DIR: str(Path(settings.data_dir).absolute()),
            ENV_JOB_ID: f"endpoint-{spec.endpoint_id}",
            ENV_TASK: f"{spec.deployed_model_id}-{index}",
        }
    )
    env.update(spec.env_extra)
    for var in model.container_spec.env:
        env[var.name] = expand_references(var.value, env)
    return env


def replica_argv(model: ModelPb, data_dir: str | os.PathLike[str] | None = None,
                 ) -> list[str]:  # type: ignore[valid-type]
    container = model.container_spec
    argv = [*container.command, *container.args]
    vllm = vllm_local.vllm_args(argv)
    if vllm is not None:
        # Vertex's vLLM container needs a GPU: the product's server answers vLLM's HTTP
        # contract in its place, on the same model folder (vllm_local.py).
        return vllm_local.server_argv(vllm, model.artifact_uri,
                                      None if data_dir is None else str(data_dir))
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable
    elif argv and argv[0] == TRITON_SERVER:
        # Triton's image (the image is recorded, not pulled): the tritonserver PyTriton
        # bundles, started in Vertex mode from the Triton environment with the container's
        # own arguments (trainers/serving/triton_local.py).
        argv[:1] = [str(triton_python()), "-m", TRITON_LOCAL_MODULE]
    return argv


class ReplicaSet:
    """One deployed model's replicas, watched by one thread."""

    def __init__(self, settings: Settings, spec: DeploymentSpec, count: int) -> None:
        self.settings = settings
        self.spec = spec
        self.health_route, self.predict_route = routes(spec)
        self._argv = replica_argv(spec.model, settings.data_dir)
        self._dir = settings.data_dir / "endpoints" / spec.endpoint_id
        self._replicas: list[_Replica] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(
            target=self._watch, name=f"endpoint-{spec.deployed_model_id}", daemon=True
        )
        self._wanted = count
        # The deployment's own network namespace, made at start (None: the host's network).
        self.netns: Path | None = None
        self._door: doors.Door | None = None

    # -- control -----------------------------------------------------------------------------

    def start(self) -> None:
        self._dir.mkdir(parents=True, exist_ok=True)
        self.netns = job_network.create(
            self.settings.data_dir, namespace_id(self.spec.endpoint_id,
                                                 self.spec.deployed_model_id))
        # Cloud Storage for the model's team only, as its jobs have it (storage/doors.py).
        self._door = doors.open_door(
            self.settings.data_dir, self.netns, f"deployment {self.spec.deployed_model_id}",
            team_of(dict(self.spec.model.labels)))
        self.scale(self._wanted)
        self._thread.start()

    def scale(self, count: int) -> None:
        """Run `count` replicas: start the missing ones, stop the extra ones."""
        with self._lock:
            self._wanted = count
            extra = self._replicas[count:]
            self._replicas = self._replicas[:count]
            missing = count - len(self._replicas)
            ports = free_ports(missing) if missing > 0 else []
            for port in ports:
                index = len(self._replicas)
                replica = _Replica(index, port, self._dir / f"{self.spec.deployed_model_id}-"
                                   f"{index}.log")
                self._replicas.append(replica)
                self._launch(replica)
        _stop_all(extra, self.settings.cancel_grace_s)

    def stop(self, grace_s: float | None = None) -> None:
        self._stopping.set()
        with self._lock:
            replicas, self._replicas = self._replicas, []
        _stop_all(replicas, self.settings.cancel_grace_s if grace_s is None else grace_s)
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if self._door is not None:
            self._door.close()
            self._door = None
        job_network.remove(self.netns)  # its replicas are gone: nothing else is in it

    def wait_ready(self, timeout_s: float) -> None:
        """Until every wanted replica answers its health route; DeployError otherwise."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                replicas = list(self._replicas)
            if replicas and all(r.ready for r in replicas):
                return
            crashed = [r for r in replicas if r.restarts >= 2 and not r.ready]
            if crashed:
                raise DeployError(self._failure("kept exiting", crashed))
            if self._stopping.is_set():
                raise DeployError("the deployment was stopped while starting")
            time.sleep(_TICK_S)
        with self._lock:
            waiting = [r for r in self._replicas if not r.ready]
        raise DeployError(self._failure(f"not ready after {timeout_s:g}s", waiting))

    # -- what the prediction service needs -----------------------------------------------------

    def ready_ports(self) -> list[int]:
        with self._lock:
            return [r.port for r in self._replicas if r.ready]

    def available(self) -> int:
        return len(self.ready_ports())

    def pids(self) -> list[int | None]:
        with self._lock:
            return [r.proc.pid if r.proc is not None and r.proc.poll() is None else None
                    for r in self._replicas]

    # -- internals -----------------------------------------------------------------------------

    def _launch(self, replica: _Replica) -> None:
        # Sandboxed as a job's replicas are (replicas/sandbox.py): the filtered environment, a
        # working directory of the endpoint's own, and the replica user when there is one.
        env = replica_env(self.settings, self.spec, replica.index, replica.port,
                          replica_environment(dict(os.environ)))
        replica.ready = False
        try:
            # A model of a team's (the control plane labels it) is served as that team's user,
            # as its jobs run: no other team's process can read or signal its server.
            who = identity_for(self.settings.replica_identity,
                               team_of(dict(self.spec.model.labels)))
        except SandboxError as exc:
            with open(replica.log_path, "ab") as out:
                out.write(f"could not start the model server as its team's user: {exc}\n"
                          .encode())
            replica.proc, replica.exited_at, replica.last_rc = None, time.monotonic(), 126
            return
        with open(replica.log_path, "ab") as out:
            try:
                home = working_dir(self.settings.data_dir,
                                   f"endpoint-{self.spec.endpoint_id}", who)
                argv, options = self._command(who)
                replica.proc = subprocess.Popen(
                    argv,
                    cwd=home,
                    env={**env, "HOME": str(home)},
                    **options,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except (OSError, ValueError, IndexError) as exc:
                out.write(f"could not start {self._argv!r}: {exc}\n".encode())
                replica.proc = None
                replica.exited_at = time.monotonic()
                replica.last_rc = 127
                return
        log.info(
            "endpoint %s: deployed model %s replica %d started (pid %d, port %d)",
            self.spec.endpoint_id, self.spec.deployed_model_id, replica.index,
            replica.proc.pid, replica.port,
        )

    def _command(self, who: Identity | None) -> tuple[list[str], dict]:
        """The replica's command line and Popen's options: entered into the deployment's
        namespace, then run as WHO (nsenter switches user after entering, as a job's replicas
        start: replicas/job_replicas.py)."""
        if self.netns is None:
            return self._argv, popen_options(who)
        if not self._argv:
            raise IndexError("the container has no command")
        options = {"umask": REPLICA_UMASK, "extra_groups": []} if who is not None else {}
        return job_network.entering(self._argv, self.netns, who), options

    def _watch(self) -> None:
        while not self._stopping.wait(_TICK_S):
            with self._lock:
                replicas = list(self._replicas)
                for replica in replicas:
                    self._check_exit(replica)
            for replica in replicas:
                if not replica.ready and replica.proc is not None and replica.proc.poll() is None:
                    replica.ready = _healthy(replica.port, self.netns, self.health_route)

    def _check_exit(self, replica: _Replica) -> None:
        """Called with the lock held: restart a replica that exited, after a short pause."""
        if replica.proc is not None:
            rc = replica.proc.poll()
            if rc is None:
                return
            signal_group(replica.proc.pid, signal.SIGKILL)
            replica.proc = None
            replica.ready = False
            replica.last_rc = rc
            replica.exited_at = time.monotonic()
            log.warning("endpoint %s: replica %d of %s exited with %s", self.spec.endpoint_id,
                        replica.index, self.spec.deployed_model_id, rc)
        if replica.exited_at is not None and \
                time.monotonic() - replica.exited_at >= _RESTART_BACKOFF_S:
            replica.restarts += 1
            replica.exited_at = None
            self._launch(replica)

    def _failure(self, what: str, replicas: list[_Replica]) -> str:
        tails = []
        for r in replicas[:2]:
            tail = _tail(r.log_path)
            rc = f", last exit code {r.last_rc}" if r.last_rc is not None else ""
            tails.append(f"replica {r.index}{rc}:\n{tail}")
        return (
            f"Model server never became ready ({what}). Please validate that your model file or "
            "container configuration are valid.\n" + "\n".join(tails)
        )


def _healthy(port: int, netns: Path | None, route: str) -> bool:
    conn = ReplicaConnection(port, netns, _HEALTH_TIMEOUT_S)
    try:
        conn.request("GET", route)
        return conn.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def _stop_all(replicas: list[_Replica], grace_s: float) -> None:
    running = [r for r in replicas if r.proc is not None and r.proc.poll() is None]
    for r in running:
        assert r.proc is not None
        signal_group(r.proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    for r in running:
        assert r.proc is not None
        with contextlib.suppress(subprocess.TimeoutExpired):
            r.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
    for r in replicas:
        if r.proc is not None:
            signal_group(r.proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                r.proc.wait(timeout=5)
        r.ready = False


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return "(no output)"
    return "\n".join(text.splitlines()[-lines:]) or "(no output)"
