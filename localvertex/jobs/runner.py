"""Running CustomJobs as local processes, following Vertex's lifecycle (VERTEX_FACTS.md s. 2).

One JobRunner thread per job owns that job's state machine and its replicas' processes:

  QUEUED --queue delay--> PENDING --pending delay, start every replica--> RUNNING
  RUNNING: workerpool0-0 exits 0          -> stop the others, SUCCEEDED
           a replica exits non-zero       -> restart it (with every host of its TPU
                                             slice; or every replica, with
                                             restart_job_on_worker_restart), at most
                                             max_restarts times per replica, then FAILED
           cancel                         -> CANCELLING, SIGTERM, grace, SIGKILL, CANCELLED
           preemption (admin)             -> SIGTERM, grace, SIGKILL, PENDING, restart all

Other threads talk to a runner only through its command queue, so a job's processes are only
ever touched by one thread. The processes themselves are started, read and stopped by
replicas/job_replicas.py, whose output lines become log entries (cloudlogging/entries.py) for
the single log writer (cloudlogging/store.py); restart_policy.py says when a replica is
restarted, updates.py writes the job's record, and armed_preemptions.py holds the preemptions
armed for a step. What a runner needs of the emulator around it is a JobHost (the JobManager
is one), not the manager itself. In synthetic mode (settings.synthetic) the replicas are timers
(synthetic_replicas.py) behind the same calls; this state machine is unchanged.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from localvertex.cloudlogging.entries import ERROR, INFO, WARNING
from localvertex.config import Settings
from localvertex.jobs import machine_fit, replica_sets
from localvertex.jobs.armed_preemptions import ArmedPreemptions
from localvertex.jobs.capacity import STOCKOUT_MESSAGE, scheduling_of
from localvertex.jobs.restart_policy import RestartPolicy, failure_message
from localvertex.jobs.store import JobRecord, JobState, JobStore
from localvertex.jobs.synthetic_replicas import WAKE
from localvertex.jobs.updates import (
    CODE_CANCELLED,
    CODE_DEADLINE_EXCEEDED,
    CODE_INTERNAL,
    CODE_RESOURCE_EXHAUSTED,
    count_preemption,
    count_restart,
    finish_record,
    save_replica,
    set_state,
)
from localvertex.quotas.capacity import Capacity
from localvertex.replicas import output_folders
from localvertex.replicas.environment import build_replicas, output_dirs
from localvertex.replicas.job_replicas import Replica

log = logging.getLogger(__name__)

PRIMARY = "workerpool0-0"
# The log the emulator writes job-level lines to (state changes, preemptions), next to the
# replicas' own logs; these entries carry the job_id label but no task_name.
SERVICE_LOG_ID = "localvertex"


Command = tuple[str, float | None]


class JobHost(Protocol):
    """What a runner asks of the emulator around it (the JobManager is one): the settings, the
    job store, the region's capacity, the log, the persistent resources, and word that it has
    ended. Nothing else of the manager: a runner never starts, cancels or preempts a job."""

    settings: Settings
    jobs: JobStore
    capacity: Capacity
    # The RUNNING PersistentResource of a name, or None.
    persistent_resource: Callable[[str], Any]

    def log_line(self, project: str, job_id: str, task_name: str | None, line: str,
                 severity: int, log_id: str | None = None) -> None: ...

    def flush_logs(self, timeout: float) -> None: ...

    def runner_finished(self, job_id: str) -> None: ...


class JobRunner:
    """One job's state machine, run on its own thread."""

    def __init__(self, host: JobHost, job_id: str) -> None:
        self.thread = threading.Thread(target=self.run, name=f"job-{job_id}", daemon=True)
        self.host = host
        self.settings = host.settings
        self.job_id = job_id
        self._commands: queue.Queue[Command] = queue.Queue()
        # Set by cancel and shutdown so that a long grace period in progress is cut short.
        self._urgent = threading.Event()
        self._replicas: list[Replica] = []
        record = host.jobs.get(job_id)
        assert record is not None
        # Its replicas: processes, or timers in synthetic mode (replica_sets.py).
        self._processes, self._tick_s = replica_sets.for_job(
            self.settings, job_id, record.job, self._replica_line, self._save_replica,
            self._urgent, self.send)
        self.project = record.project
        self.location = record.location
        self._spec = record.job.job_spec
        self._policy = RestartPolicy.for_job(self._spec.scheduling, self.settings)
        self._started_at: float | None = None
        self._armed = ArmedPreemptions()

    # -- talking to the runner -------------------------------------------------------------

    def start(self) -> None:
        self.thread.start()

    def join(self, timeout: float) -> None:
        self.thread.join(timeout)

    def send(self, command: str, arg: float | None = None) -> None:
        if command in ("cancel", "shutdown"):
            self._urgent.set()
        self._commands.put((command, arg))

    def arm_preemption(self, step: int, grace_s: float) -> None:
        """Preempt once any replica reports a `step` event at or past STEP (see
        armed_preemptions.py); several may be armed, the lowest fires first."""
        self._armed.arm(step, grace_s)

    def pids(self) -> dict[str, int | None]:
        return self._processes.pids(self._replicas)

    # -- the state machine -----------------------------------------------------------------

    def run(self) -> None:
        try:
            self._run()
        except Exception as exc:
            log.exception("job %s: emulator error", self.job_id)
            self._processes.stop(self._replicas, 0)
            with contextlib.suppress(KeyError):
                self._finish(JobState.JOB_STATE_FAILED, CODE_INTERNAL, f"Emulator error: {exc}")
        finally:
            self._processes.close()
            self.host.runner_finished(self.job_id)

    def _run(self) -> None:
        record = self.host.jobs.get(self.job_id)
        if record is None or record.terminal:
            return
        if record.state == JobState.JOB_STATE_CANCELLING:
            self._finish(JobState.JOB_STATE_CANCELLED, CODE_CANCELLED, "CANCELED")
            return
        # A job that cannot fit this machine fails before any wait or process (machine_fit.py);
        # synthetic replicas are timers, with nothing to fit.
        refused = None if self.settings.synthetic else machine_fit.refusal(self.settings,
                                                                           self._spec)
        if refused is not None:
            self._finish(JobState.JOB_STATE_FAILED, machine_fit.CODE_FAILED_PRECONDITION, refused)
            return
        if not self._provision(record):
            return
        self._replicas = self._build(record)
        who = self._processes.open()
        folders = [Path(path) for path in output_dirs(self.settings, self._spec).values()]
        if folders:
            output_folders.prepare(self.settings.data_dir, folders[0].parent, folders, who,
                                   self.settings.replica_identity)
        # Replicas already on record ran under an earlier emulator: this start is a restart.
        resumed = bool(record.replicas)
        for replica in self._replicas:
            if resumed:
                self._count_restart(replica, " after the emulator restarted")
            self._processes.launch(replica)
        self._set_state(JobState.JOB_STATE_RUNNING)
        self._started_at = time.monotonic()
        self._monitor()

    def _provision(self, record: JobRecord) -> bool:
        """Wait out the queue and pending delays the job has left; False if the runner must
        stop (cancelled or shut down meanwhile). A job on a running persistent resource has
        its machines already: it passes through the states without waiting."""
        if self._on_persistent_resource(record):
            if record.state == JobState.JOB_STATE_QUEUED:
                self._set_state(JobState.JOB_STATE_PENDING)
            self._service_line("Starting on persistent resource "
                               f"{record.job.job_spec.persistent_resource_id}.", INFO)
            return True
        if record.state == JobState.JOB_STATE_QUEUED:
            self._service_line("Waiting for job to be provisioned.", INFO)
            if self._interrupted(self._wait(self.settings.queue_delay_s)):
                return False
            self._set_state(JobState.JOB_STATE_PENDING)
        if record.state != JobState.JOB_STATE_RUNNING:
            self._service_line("Waiting for training program to start.", INFO)
            if self._interrupted(self._wait(self.settings.pending_delay_s)):
                return False
            if self._stocked_out(record):
                return False
        return True

    def _on_persistent_resource(self, record: JobRecord) -> bool:
        resource_id = record.job.job_spec.persistent_resource_id
        if not resource_id:
            return False
        parent = record.job.name.split("/customJobs/")[0]
        return self.host.persistent_resource(
            f"{parent}/persistentResources/{resource_id}") is not None

    def _stocked_out(self, record: JobRecord) -> bool:
        """An injected stockout in the job's region: no machines, the job fails as on Vertex."""
        scheduling = scheduling_of(record.job)
        if not self.host.capacity.take_stockout(self.location, scheduling):
            return False
        message = STOCKOUT_MESSAGE.format(region=self.location, scheduling=scheduling)
        self._service_line(message, ERROR)
        self._finish(JobState.JOB_STATE_FAILED, CODE_RESOURCE_EXHAUSTED, message)
        return True

    def _build(self, record: JobRecord) -> list[Replica]:
        specs = build_replicas(
            settings=self.settings, project=self.project, job_id=self.job_id, job_spec=self._spec
        )
        return [
            Replica(spec=s, restarts=int(record.replicas.get(s.key, {}).get("restarts", 0)))
            for s in specs
        ]

    def _interrupted(self, command: Command | None) -> bool:
        """Handle a command that arrived while no replica runs; True if the runner must stop."""
        if command is None:
            return False
        if command[0] == "cancel":
            self._finish(JobState.JOB_STATE_CANCELLED, CODE_CANCELLED, "CANCELED")
            return True
        return command[0] == "shutdown"

    def _wait(self, seconds: float) -> Command | None:
        """Sleep up to `seconds`, returning early with a cancel or shutdown command."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                command = self._commands.get(timeout=remaining)
            except queue.Empty:
                return None
            if command[0] in ("cancel", "shutdown"):
                return command
            log.info("job %s: ignoring %s while no replica runs", self.job_id, command[0])

    def _monitor(self) -> None:
        while True:
            try:
                command: Command | None = self._commands.get(timeout=self._next_look_s())
            except queue.Empty:
                command = None
            # A WAKE (a synthetic replica ended) is a reason to poll now, nothing more.
            if command is not None and command[0] != WAKE:
                if self._on_command(*command):
                    return
                continue
            if self._timed_out():
                return
            for replica in self._replicas:
                rc = replica.poll()
                if rc is not None and self._on_exit(replica, rc):
                    return

    def _on_command(self, name: str, arg: float | None) -> bool:
        """Act on a command while the replicas run; True when the runner must stop."""
        if name == "cancel":
            self._cancel()
            return True
        if name == "shutdown":
            self._urgent.clear()
            self._service_line("Emulator stopping: replicas stopped.", INFO)
            self._processes.stop(self._replicas, min(self.settings.cancel_grace_s, 3.0))
            return True
        if name == "preempt":
            return self._preempt(self.settings.preempt_grace_s if arg is None else arg)
        return False

    def _next_look_s(self) -> float:
        """How long the monitor may wait for a command before it polls again: its tick, or
        less when the job's scheduling.timeout falls due sooner."""
        timeout_s = self._policy.timeout_s
        if timeout_s is None or self._started_at is None:
            return self._tick_s
        left = timeout_s - (time.monotonic() - self._started_at)
        return max(0.0, min(self._tick_s, left))

    def _timed_out(self) -> bool:
        timeout_s = self._policy.timeout_s
        if timeout_s is None or self._started_at is None:
            return False
        if time.monotonic() - self._started_at < timeout_s:
            return False
        self._processes.stop(self._replicas, self.settings.cancel_grace_s)
        self._finish(
            JobState.JOB_STATE_FAILED,
            CODE_DEADLINE_EXCEEDED,
            f"The job ran longer than its scheduling.timeout of {timeout_s:g}s.",
        )
        return True

    # -- a replica exited ------------------------------------------------------------------

    def _on_exit(self, replica: Replica, rc: int) -> bool:
        """React to a replica's exit; True when the job has ended."""
        self._processes.reap(replica)
        others = [r for r in self._replicas if r is not replica]
        if rc == 0:
            if replica.key != PRIMARY:
                replica.done = True
                return False
            self._processes.stop(others, self.settings.cancel_grace_s)
            self._finish(JobState.JOB_STATE_SUCCEEDED, None, None)
            return True
        if not self._policy.may_restart(replica.restarts):
            self._processes.stop(others, self.settings.cancel_grace_s)
            message = failure_message(replica.name, rc, replica.restarts)
            self._replica_line(replica, message, ERROR)
            self._finish(JobState.JOB_STATE_FAILED, CODE_INTERNAL, message)
            return True
        self._count_restart(replica, f", exit code {rc}")
        # A TPU slice's hosts meet in `jax.distributed` at start and run every step together:
        # one host restarted alone would wait for peers that never come back to the start.
        peers = [r for r in others if r.task == replica.task]
        if self._policy.restart_all:
            self._restart_with(replica, others, "with the whole job "
                               "(restart_job_on_worker_restart)", rc)
        elif peers:
            self._restart_with(replica, peers, "with its TPU slice", rc)
        else:
            self._processes.launch(replica)
        return False

    def _restart_with(self, failed: Replica, stopped: list[Replica], how: str, rc: int) -> None:
        """Stop `stopped`, say why in each one's log, and start them and `failed` again."""
        self._processes.stop(stopped, self.settings.cancel_grace_s)
        for other in stopped:
            self._replica_line(other, f"{other.restarting} {how}: {failed.name} exited "
                               f"with code {rc}", WARNING)
        for r in (failed, *stopped):
            r.done = False
            self._processes.launch(r)

    def _cancel(self) -> None:
        # The cancel's own grace period is the full one; `_urgent` only shortens earlier ones.
        self._urgent.clear()
        self._processes.stop(self._replicas, self.settings.cancel_grace_s)
        self._finish(JobState.JOB_STATE_CANCELLED, CODE_CANCELLED, "CANCELED")

    # -- preemption ------------------------------------------------------------------------

    def _preempt(self, grace_s: float) -> bool:
        """A spot VM reclaimed: every replica gets SIGTERM, `grace_s`, SIGKILL; the job is then
        provisioned again and every replica restarted. True when the job has ended."""
        record = count_preemption(self.host.jobs, self.job_id)
        self._service_line(
            f"Spot VM preempted (preemption {record.preemption_count}): replicas get SIGTERM "
            f"and {grace_s:g}s before SIGKILL.",
            WARNING,
        )
        codes = self._processes.stop(self._replicas, grace_s)
        for replica in self._replicas:
            rc = codes.get(replica.key)
            self._replica_line(
                replica,
                f"Replica {replica.name} was preempted"
                + (f", exit code {rc}" if rc is not None else ""),
                WARNING,
            )
        if record.preemption_count > self.settings.max_preemptions:
            self._finish(
                JobState.JOB_STATE_FAILED,
                CODE_RESOURCE_EXHAUSTED,
                f"The job was preempted {record.preemption_count} times, more than the "
                f"{self.settings.max_preemptions} restarts allowed (STOCKOUT).",
            )
            return True
        self._set_state(JobState.JOB_STATE_PENDING)
        if self._interrupted(self._wait(self.settings.pending_delay_s)):
            return True
        # Compute Engine looks for a VM again: a stockout armed in the region ends the job.
        record = self.host.jobs.get(self.job_id)
        if record is not None and self._stocked_out(record):
            return True
        for replica in self._replicas:
            replica.done = False
            self._replica_line(
                replica, f"{replica.restarting} after preemption", WARNING
            )
            self._processes.launch(replica)
        self._set_state(JobState.JOB_STATE_RUNNING)
        return False

    # -- state and logs --------------------------------------------------------------------

    def _save_replica(self, replica: Replica) -> None:
        pid = replica.proc.pid if replica.proc is not None else None
        save_replica(
            self.host.jobs, self.job_id, replica.key, pid, replica.restarts, replica.spec.port
        )

    def _count_restart(self, replica: Replica, why: str) -> None:
        """Count a restart of `replica` and say so in its log; `why` ends the line."""
        replica.restarts += 1
        count_restart(self.host.jobs, self.job_id)
        self._replica_line(
            replica,
            f"{replica.restarting} (restart {replica.restarts} of "
            f"{self._policy.max_restarts}){why}",
            WARNING,
        )

    def _set_state(self, state: int) -> None:
        set_state(self.host.jobs, self.job_id, state)
        log.info("job %s: %s", self.job_id, JobState(state).name)

    def _finish(self, state: int, code: int | None, message: str | None) -> None:
        lines = {
            JobState.JOB_STATE_SUCCEEDED: ("Job completed successfully.", INFO),
            JobState.JOB_STATE_FAILED: (f"Job failed. {message}", ERROR),
            JobState.JOB_STATE_CANCELLED: ("Job was cancelled.", INFO),
        }
        if state in lines:
            self._service_line(*lines[state])
        # Every line the job printed is stored before clients can see that it ended.
        self.host.flush_logs(timeout=10)
        finish_record(self.host.jobs, self.job_id, state, code, message)
        with contextlib.suppress(OSError):
            (self.settings.jobs_dir / self.job_id).rmdir()
        log.info("job %s: %s", self.job_id, JobState(state).name)

    def _service_line(self, line: str, severity: int) -> None:
        self.host.log_line(self.project, self.job_id, None, line, severity, SERVICE_LOG_ID)

    def _replica_line(self, replica: Replica, line: str, severity: int) -> None:
        self.host.log_line(self.project, self.job_id, replica.task, line, severity)
        grace_s = self._armed.due(line)
        if grace_s is not None:
            self.send("preempt", grace_s)
