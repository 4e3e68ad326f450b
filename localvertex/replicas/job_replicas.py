"""A job's replicas as local processes: starting them, reading their output, stopping them.

Each replica runs in its own session (see processes.py), with a pid file under the job's folder
so a later emulator can find what this one left behind, as its team's user (team_users.py) in
the job's own network namespace (job_network.py), both settled by open() before the first
replica starts; close() removes the namespace when the job's runner ends. Its stdout and
stderr are read by two small threads that hand every line to the runner (as INFO and ERROR).
Only the job's runner thread starts, reaps and stops replicas; `pids` may be called from any
thread.
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from contract import events as contract_events
from localvertex.cloudlogging.entries import ERROR, INFO
from localvertex.config import Settings
from localvertex.replicas import job_network, torch_extensions
from localvertex.replicas.environment import ReplicaSpec
from localvertex.replicas.processes import signal_group
from localvertex.replicas.sandbox import REPLICA_UMASK, Identity, popen_options, working_dir
from localvertex.replicas.team_users import identity_for
from localvertex.storage import doors

log = logging.getLogger(__name__)

# When a cancel or shutdown arrives during a long grace period (a preemption's 30 s), the
# replicas still get this long before SIGKILL.
URGENT_GRACE_S = 2.0
# The exit status of a container whose command does not exist.
_COMMAND_NOT_FOUND = 127


@dataclass
class Replica:
    spec: ReplicaSpec
    restarts: int = 0
    proc: subprocess.Popen[bytes] | None = None
    readers: list[threading.Thread] = field(default_factory=list)
    # Exit status of a launch that failed (no such command): reported like an exit.
    launch_rc: int | None = None
    # A replica other than the primary that exited 0 is finished and not restarted.
    done: bool = False

    @property
    def task(self) -> str:
        """The task name its log lines carry (every host of a TPU slice shares its replica's)."""
        return self.spec.task_name

    @property
    def key(self) -> str:
        """The process's own name: its pid file and its entry in the job's record."""
        return self.spec.key

    @property
    def name(self) -> str:
        """How messages about it name it: the replica, and the slice's host where it has one."""
        return self.task if self.spec.host == 0 else f"{self.task} (TPU host {self.spec.host})"

    @property
    def restarting(self) -> str:
        """How a line about its restart starts. Only the replica itself (a slice's host 0)
        starts with the contract's RESTART_PREFIX ("Restarting replica X"): the control plane
        counts such a line as one restart of X, and a slice's hosts restart together, once."""
        if self.spec.host == 0:
            return f"{contract_events.RESTART_PREFIX} {self.task}"
        return f"Restarting {self.name}"

    def poll(self) -> int | None:
        if self.proc is not None:
            return self.proc.poll()
        if self.launch_rc is not None:
            rc, self.launch_rc = self.launch_rc, None
            return rc
        return None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


# Called with a replica, one line of its output (or about it) and that line's severity.
LineSink = Callable[[Replica, str, int], None]


class ReplicaProcesses:
    """Starts, reaps and stops one job's replica processes.

    `on_line` receives each line a replica prints; `on_saved` is called whenever a replica's
    process starts or is collected, to record its pid; `urgent` (set by cancel and shutdown)
    cuts a long grace period short.
    """

    def __init__(
        self,
        settings: Settings,
        job_id: str,
        on_line: LineSink,
        on_saved: Callable[[Replica], None],
        urgent: threading.Event,
        team: str = "",
    ) -> None:
        self.settings = settings
        self.job_id = job_id
        self.team = team
        # Set by open(): who the replicas run as, and the namespace they share (or None).
        self.who: Identity | None = None
        self._netns: Path | None = None
        self._door: doors.Door | None = None
        self._on_line = on_line
        self._on_saved = on_saved
        self._urgent = urgent
        self._pid_lock = threading.Lock()

    def pids(self, replicas: list[Replica]) -> dict[str, int | None]:
        with self._pid_lock:
            return {r.key: (r.proc.pid if r.running and r.proc else None) for r in replicas}

    def _pid_file(self, replica: Replica) -> Path:
        return self.settings.jobs_dir / self.job_id / f"{replica.key}.pid"

    def open(self) -> Identity | None:
        """Settle who the job's replicas run as (its team's user) and make their network
        namespace; who that is. SandboxError when the team's user cannot be had."""
        self.who = identity_for(self.settings.replica_identity, self.team)
        if self._netns is None:
            self._netns = job_network.create(self.settings.data_dir, self.job_id)
            # Its team's way to Cloud Storage, and no other (storage/doors.py).
            self._door = doors.open_door(self.settings.data_dir, self._netns,
                                         f"job {self.job_id}", self.team)
        return self.who

    def close(self) -> None:
        """Remove the job's namespace (its replicas are stopped by then) and its door."""
        if self._door is not None:
            self._door.close()
            self._door = None
        job_network.remove(self._netns)
        self._netns = None

    def _command(self, spec: ReplicaSpec, cwd: Path) -> tuple[list[str], dict]:
        """The replica's command line and Popen's options: entered into the job's namespace
        as its user where there is one (nsenter switches user, after entering it)."""
        if self._netns is None:
            return spec.argv, popen_options(self.who)
        _must_exist(spec.argv, spec.env.get("PATH"), cwd)
        options = {"umask": REPLICA_UMASK, "extra_groups": []} if self.who is not None else {}
        return job_network.entering(spec.argv, self._netns, self.who), options

    def launch(self, replica: Replica) -> None:
        spec = replica.spec
        who = self.who
        try:
            # The job's own folder, and its team's user when there is one (sandbox.py).
            workdir = working_dir(self.settings.data_dir, self.job_id, who)
            argv, options = self._command(spec, workdir)
            proc = subprocess.Popen(
                argv,
                cwd=workdir,
                env={**torch_extensions.for_replica(workdir, who), **spec.env,
                     "HOME": str(workdir)},
                **options,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except (OSError, ValueError, IndexError) as exc:
            # As a container whose command does not exist: it exits at once with 127.
            self._on_line(replica, f"Could not start {spec.argv!r}: {exc}", ERROR)
            replica.launch_rc = _COMMAND_NOT_FOUND
            return
        with self._pid_lock:
            replica.proc = proc
        pid_file = self._pid_file(replica)
        pid_file.parent.mkdir(parents=True, exist_ok=True)
        pid_file.write_text(f"{proc.pid}\n")
        assert proc.stdout is not None and proc.stderr is not None
        replica.readers = [
            self._reader(replica, proc.stdout, INFO),
            self._reader(replica, proc.stderr, ERROR),
        ]
        self._on_saved(replica)
        log.info("job %s: started %s (pid %d)", self.job_id, replica.key, proc.pid)

    def _reader(self, replica: Replica, stream: IO[bytes], severity: int) -> threading.Thread:
        def read() -> None:
            with stream:
                for raw in iter(stream.readline, b""):
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if line.strip():
                        self._on_line(replica, line, severity)

        thread = threading.Thread(target=read, name=f"{self.job_id}-{replica.key}", daemon=True)
        thread.start()
        return thread

    def reap(self, replica: Replica) -> int | None:
        """Collect an exited replica: kill what it left in its group, drain its output."""
        proc = replica.proc
        if proc is None:
            return None
        rc = proc.wait()
        # Its children die with it, as in a container; this also closes their copies of the
        # pipes, so the readers see end of file.
        signal_group(proc.pid, signal.SIGKILL)
        for thread in replica.readers:
            thread.join(timeout=5)
        with self._pid_lock:
            replica.proc = None
        replica.readers = []
        self._pid_file(replica).unlink(missing_ok=True)
        self._on_saved(replica)
        return rc

    def stop(self, replicas: list[Replica], grace_s: float) -> dict[str, int]:
        """SIGTERM the replicas' groups, SIGKILL after `grace_s`; their exit codes.

        Replicas that already exited but were not collected yet are collected too.
        """
        started = [r for r in replicas if r.proc is not None]
        for r in started:
            if r.running:
                assert r.proc is not None
                signal_group(r.proc.pid, signal.SIGTERM)
        self._wait_for_exit(started, grace_s)
        codes = {}
        for r in started:
            if r.running:
                assert r.proc is not None
                signal_group(r.proc.pid, signal.SIGKILL)
            rc = self.reap(r)
            if rc is not None:
                codes[r.key] = rc
        for r in replicas:
            # A pending launch failure is moot once the replica is stopped.
            r.launch_rc = None
        return codes

    def _wait_for_exit(self, replicas: list[Replica], grace_s: float) -> None:
        """Wait up to `grace_s` for the replicas to exit; at most URGENT_GRACE_S more once
        `urgent` is set."""
        deadline = time.monotonic() + grace_s
        while any(r.running for r in replicas):
            now = time.monotonic()
            if self._urgent.is_set():
                deadline = min(deadline, now + URGENT_GRACE_S)
            if now >= deadline:
                break
            time.sleep(0.05)


def _must_exist(argv: list[str], path: str | None, cwd: Path) -> None:
    """Raise as Popen would for a command that is not there: started through nsenter, a
    missing command would otherwise be nsenter's exit 127 rather than the launch error a
    container that cannot start gives."""
    if not argv:
        raise IndexError("empty command")
    command = argv[0]
    if os.sep in command:  # a path: from the replica's working folder, as exec reads it
        found: str | None = os.path.join(cwd, command)
    else:
        found = shutil.which(command, path=path)
    if found is None or not os.path.exists(found):
        raise FileNotFoundError(2, "No such file or directory", command)
