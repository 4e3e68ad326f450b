"""A real local Ray cluster for a persistent resource with a Ray runtime: one `ray start --head`
process and one `ray start --address` process per worker node, each with a small CPU count.

Each node runs in its own process group (`--block` keeps `ray start` in the foreground, so the
group holds the node's raylet, GCS, dashboard and agents). Every node carries the emulator's
replica markers in its environment (replicas/environment.py: data dir, a job id of
`ray:<resource id>`), which Ray's own processes inherit: stopping sends SIGTERM to the groups,
then SIGKILL, then kills any process still carrying this cluster's markers, and an emulator's
kill_strays finds what a killed emulator left. Never `ray stop`, which would stop every Ray on
the machine.

The temp dir is short and under /tmp because Ray puts unix sockets in it (a socket path holds at
most 107 bytes); the emulator's data dir gets a link to it.

The nodes run what a team submits (Ray jobs), so they are sandboxed as a job's replicas are
(localvertex/replicas/sandbox.py): the filtered environment, a working directory of their own,
and their team's user when the control plane labelled the cluster with one (the sandbox's
replica user otherwise; whoever it is owns the temp dir and the working directory), in a
network namespace of the cluster's own (replicas/job_network.py: loopback only), so its GCS,
raylets and agents answer its own nodes only. The dashboard and the Ray client server, which
the control plane reaches, answer on the host's 127.0.0.1 under the same port numbers through
the emulator (replicas/port_forward.py); no other team's process runs on the host's network.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from localvertex.replicas import job_network
from localvertex.replicas.environment import ENV_DATA_DIR, ENV_JOB_ID, ENV_TASK
from localvertex.replicas.port_forward import Forwarder
from localvertex.replicas.processes import find_strays
from localvertex.replicas.sandbox import (
    REPLICA_UMASK,
    Identity,
    popen_options,
    replica_environment,
    working_dir,
)

log = logging.getLogger(__name__)

CPUS_PER_NODE = 1
# Ray's floor for the object store is 75 MB; small clusters need little more.
OBJECT_STORE_BYTES = 100 * 1024 * 1024
START_TIMEOUT_S = 120.0
# A node's `ray start` can abort while it first reaches the GCS on a loaded machine; a cloud VM
# that fails to boot is replaced the same way, so a node gets this many starts.
NODE_START_TRIES = 3
# How much of a dead node's log its error quotes.
LOG_TAIL_BYTES = 2000
# Ray drains a node for up to 30 s on SIGTERM; a VM going away does not wait that long.
STOP_GRACE_S = 5.0


class RayUnavailable(RuntimeError):
    """Ray is not installed where the emulator runs, or a node did not come up."""


class NodeExited(RayUnavailable):
    """A node's `ray start` process ended while the cluster needed it."""

    def __init__(self, task: str, status: int | None, log_path: Path, tail: str) -> None:
        super().__init__(f"Ray node {task} exited with status {status} (log: {log_path}); "
                         f"its last lines: {tail}")
        self.task = task


def ray_executable() -> str | None:
    """`ray` beside the emulator's Python first (its virtualenv), then on PATH."""
    beside = Path(sys.executable).with_name("ray")
    if beside.exists():
        return str(beside)
    return shutil.which("ray")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class RayCluster:
    """The processes of one cluster; its logs and Ray's session files are under `link`, in the
    emulator's data dir."""

    resource_id: str
    data_dir: Path
    workdir: Path
    gcs_port: int = 0
    dashboard_port: int = 0
    client_port: int = 0
    # The sandbox's replica user (None: the emulator's own user).
    who: Identity | None = None
    # Ray's token authentication (RAY_AUTH_MODE=token, Ray 2.52 on): the cluster's token for
    # its dashboard's address (localvertex/auth.py's ray_token), which its nodes, and so the
    # team's Ray jobs, hold and nobody else; every Ray RPC and dashboard request without it is
    # refused. None: no token (the ports stay loopback-only).
    token_for: Callable[[str], str] | None = None
    temp_dir: Path | None = None
    head: subprocess.Popen | None = None
    workers: list[subprocess.Popen] = field(default_factory=list)
    # The cluster's network namespace (None: the host's network, as a non-root emulator
    # runs it), and the host's doors into it: its dashboard and Ray client ports.
    netns: Path | None = None
    doors: list[Forwarder] = field(default_factory=list)

    @property
    def link(self) -> Path:
        return self.data_dir / "clusters" / self.resource_id / "ray"

    @property
    def marker(self) -> str:
        return f"ray:{self.resource_id}"

    @property
    def dashboard_address(self) -> str:
        return f"127.0.0.1:{self.dashboard_port}"

    @property
    def client_address(self) -> str:
        return f"127.0.0.1:{self.client_port}"

    def _env(self, task: str, home: Path) -> dict[str, str]:
        # Only what a replica may see of the emulator's environment (no database URLs, keys).
        env = replica_environment(dict(os.environ))
        env.update({ENV_DATA_DIR: str(self.data_dir.absolute()), ENV_JOB_ID: self.marker,
                    ENV_TASK: task, "HOME": str(home)})
        # Entrypoints say `python ...`: the emulator's own interpreter (its virtualenv) answers,
        # and `python -m trainers.ray_train` resolves from the work dir.
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(self.workdir),
                                                        env.get("PYTHONPATH", "")) if p)
        env["RAY_USAGE_STATS_ENABLED"] = "0"
        if self.token_for is not None:
            env.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.token})
        return env

    @property
    def token(self) -> str:
        """The cluster's Ray token (its dashboard's address is part of it)."""
        return self.token_for(self.dashboard_address) if self.token_for else ""

    def head_args(self) -> list[str]:
        """`ray start`'s own arguments for the head node (beside those every node gets)."""
        return ["--head", "--port", str(self.gcs_port), "--include-dashboard", "true",
                "--dashboard-host", "127.0.0.1", "--dashboard-port", str(self.dashboard_port),
                "--ray-client-server-port", str(self.client_port),
                "--temp-dir", str(self.temp_dir)]

    def worker_args(self) -> list[str]:
        """`ray start`'s own arguments for a worker node. A worker node takes the head's temp
        dir and session, so every node of this cluster writes its processes' logs to one logs
        folder; each node's log monitor would forward every file in it to the drivers, and a
        Ray job's output would hold each worker line once per node (ray-project/ray#48642).
        On Vertex each node is its own machine with its own folder; here the head's monitor
        alone forwards them all, once."""
        return ["--address", f"127.0.0.1:{self.gcs_port}", "--include-log-monitor", "false"]

    def _spawn(self, args: list[str], task: str) -> subprocess.Popen:
        exe = ray_executable()
        if exe is None:
            raise RayUnavailable("Ray is not installed where the emulator runs "
                                 "(pip install -e '.[ray]').")
        assert self.temp_dir is not None
        # The nodes' own working directory, also their HOME (sandbox.working_dir).
        home = working_dir(self.data_dir, f"ray-{self.resource_id}", self.who)
        argv = [exe, "start", "--block", "--disable-usage-stats",
                "--node-ip-address", "127.0.0.1", "--num-cpus", str(CPUS_PER_NODE),
                "--num-gpus", "0", "--object-store-memory", str(OBJECT_STORE_BYTES),
                "--dashboard-agent-listen-port", str(free_port()), *args]
        options = popen_options(self.who)
        if self.netns is not None:
            # Entered as root, then the nodes' user (nsenter switches after entering), as a
            # job's replicas start (replicas/job_replicas.py).
            argv = job_network.entering(argv, self.netns, self.who)
            options = {"umask": REPLICA_UMASK, "extra_groups": []} if self.who else {}
        out = open(self.temp_dir / f"{task}.log", "ab")  # noqa: SIM115 - the child owns it
        try:
            return subprocess.Popen(
                argv, cwd=home, env=self._env(task, home), stdout=out,
                stderr=subprocess.STDOUT, start_new_session=True, **options,
            )
        finally:
            out.close()

    def start(self, workers: int) -> None:
        """Start the head and WORKERS worker nodes; return when all have joined."""
        self.temp_dir = Path(tempfile.mkdtemp(prefix="lvray-"))
        if self.who is not None:  # Ray's sessions, sockets and logs: the nodes' own
            os.chown(self.temp_dir, self.who.uid, self.who.gid)
        self.link.parent.mkdir(parents=True, exist_ok=True)
        if self.link.is_symlink() or self.link.exists():
            self.link.unlink()
        self.link.symlink_to(self.temp_dir)
        self.netns = job_network.create(self.data_dir, f"ray-{self.resource_id}")
        for attempt in range(1, NODE_START_TRIES + 1):
            self.gcs_port, self.dashboard_port, self.client_port = (free_port(), free_port(),
                                                                    free_port())
            self._open_doors()
            self.head = self._spawn(self.head_args(), "head")
            try:
                self._wait_for_dashboard()
                # The dashboard answers before the head's raylet has registered, and `ray
                # start` gives the raylet 30 s to do it: on a busy machine the head can still
                # exit here, and that start is tried again, not a worker's.
                self._wait_for_nodes(1)
                break
            except NodeExited as exited:
                self._close_doors()
                self._give_up_on(self.head, exited, attempt)
                self.head = None
        self.scale(workers)

    def scale(self, workers: int) -> None:
        """Start or stop worker nodes until WORKERS run (newest stopped first)."""
        while len(self.workers) > workers:
            _stop_groups([self.workers.pop()])
        # One at a time: nodes starting together on a small machine time out joining.
        for index in range(len(self.workers), workers):
            task = f"worker-{index}"
            for attempt in range(1, NODE_START_TRIES + 1):
                node = self._spawn(self.worker_args(), task)
                self.workers.append(node)
                try:
                    self._wait_for_nodes(2 + index)
                    break
                except NodeExited as exited:
                    if exited.task != task:  # the head or an older worker: not this start's
                        raise
                    self.workers.remove(node)
                    self._give_up_on(node, exited, attempt)
        self._wait_for_nodes(1 + workers)

    def _open_doors(self) -> None:
        """The host's 127.0.0.1 dashboard and client ports, leading into the namespace."""
        if self.netns is not None:
            self.doors = [Forwarder(self.netns, port)
                          for port in (self.dashboard_port, self.client_port)]

    def _close_doors(self) -> None:
        for door in self.doors:
            door.close()
        self.doors = []

    def _give_up_on(self, node: subprocess.Popen, exited: NodeExited, attempt: int) -> None:
        """Stop what is left of a node that died starting; raise when it has no tries left."""
        _stop_groups([node])
        if attempt == NODE_START_TRIES:
            raise exited
        log.warning("cluster %s: %s; starting it again (try %d of %d)", self.resource_id,
                    exited, attempt + 1, NODE_START_TRIES)

    def _get(self, path: str) -> bytes:
        request = urllib.request.Request(f"http://{self.dashboard_address}{path}")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.read()

    def _check_alive(self) -> None:
        named = [("head", self.head)] + [(f"worker-{i}", p) for i, p in enumerate(self.workers)]
        for task, proc in named:
            if proc is not None and proc.poll() is not None:
                assert self.temp_dir is not None
                log_path = self.temp_dir / f"{task}.log"
                raise NodeExited(task, proc.returncode, self.link / log_path.name,
                                 _tail(log_path))

    def _wait_for_dashboard(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                self._get("/api/version")
                return
            except (OSError, urllib.error.URLError):
                time.sleep(0.5)
        raise RayUnavailable(f"the Ray dashboard did not answer in {START_TIMEOUT_S:.0f} s")

    def alive_nodes(self) -> int:
        import json

        body = json.loads(self._get("/nodes?view=summary"))
        return sum(1 for node in body["data"]["summary"]
                   if node.get("raylet", {}).get("state") == "ALIVE")

    def _wait_for_nodes(self, count: int) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                if self.alive_nodes() == count:
                    return
            except (OSError, urllib.error.URLError, KeyError, ValueError):
                pass
            time.sleep(0.5)
        raise RayUnavailable(f"{count} Ray nodes did not join in {START_TIMEOUT_S:.0f} s")

    def stop(self) -> None:
        self._close_doors()
        _stop_groups([p for p in [*self.workers, self.head] if p is not None])
        self.workers = []
        self.head = None
        for pid in self.pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)
        if self.link.is_symlink():
            self.link.unlink()
        job_network.remove(self.netns)
        self.netns = None

    def pids(self) -> list[int]:
        """Every process of this cluster still running."""
        return [pid for pid, job, _ in find_strays(self.data_dir) if job == self.marker]


def _tail(path: Path) -> str:
    """The end of a node's log, on one line, for an error a user reads."""
    try:
        with open(path, "rb") as f:
            f.seek(max(path.stat().st_size - LOG_TAIL_BYTES, 0))
            text = f.read().decode("utf-8", "replace")
    except OSError:
        return "(no log)"
    return " | ".join(line.strip() for line in text.splitlines() if line.strip()) or "(empty)"


def _stop_groups(procs: list[subprocess.Popen]) -> None:
    """SIGTERM to every node's group at once, SIGKILL to what is left after the grace."""
    for sig, wait in ((signal.SIGTERM, STOP_GRACE_S), (signal.SIGKILL, 5.0)):
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
        deadline = time.monotonic() + wait
        for proc in procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(max(deadline - time.monotonic(), 0.01))
        procs = [p for p in procs if p.poll() is None]
        if not procs:
            return
