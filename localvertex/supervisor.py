"""Running CustomJobs as local processes, following Vertex's lifecycle (VERTEX_FACTS.md s. 2).

One JobRunner thread per job owns that job's state machine and its replicas' processes:

  QUEUED --queue delay--> PENDING --pending delay, start every replica--> RUNNING
  RUNNING: workerpool0-0 exits 0          -> stop the others, SUCCEEDED
           a replica exits non-zero       -> restart it (or every replica, with
                                             restart_job_on_worker_restart), at most
                                             max_restarts times per replica, then FAILED
           cancel                         -> CANCELLING, SIGTERM, grace, SIGKILL, CANCELLED
           preemption (admin)             -> SIGTERM, grace, SIGKILL, PENDING, restart all

Other threads talk to a runner only through its command queue, so a job's processes are only
ever touched by one thread. Each replica's stdout and stderr are read by two small threads that
turn lines into log entries (logentries.py) for the single log writer (logstore.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import queue
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from google.protobuf import duration_pb2

from localvertex import environment, logentries, processes, timeutil
from localvertex.environment import ReplicaSpec
from localvertex.jobstore import JobRecord, JobState

if TYPE_CHECKING:
    from localvertex.manager import JobManager

log = logging.getLogger(__name__)

PRIMARY = "workerpool0-0"
# The log the emulator writes job-level lines to (state changes, preemptions), next to the
# replicas' own logs; these entries carry the job_id label but no task_name.
SERVICE_LOG_ID = "localvertex"

# google.rpc.Code values used in CustomJob.error.
CODE_CANCELLED = 1
CODE_DEADLINE_EXCEEDED = 4
CODE_RESOURCE_EXHAUSTED = 8
CODE_INTERNAL = 13

_TICK_S = 0.1
# When a cancel or shutdown arrives during a long grace period (a preemption's 30 s), the
# replicas still get this long before SIGKILL.
_URGENT_GRACE_S = 2.0


@dataclass
class _Replica:
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
        return self.spec.task_name

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


def describe_exit(rc: int) -> str:
    if rc < 0:
        try:
            return f"killed by signal {signal.Signals(-rc).name}"
        except ValueError:
            return f"killed by signal {-rc}"
    return "Error"


def finish_record(
    manager: JobManager, job_id: str, state: int, code: int | None, message: str | None
) -> JobRecord:
    def change(record: JobRecord) -> None:
        if record.terminal:
            return
        now = timeutil.to_timestamp(time.time_ns())
        record.job.state = state
        record.job.update_time.CopyFrom(now)
        record.job.end_time.CopyFrom(now)
        if code is not None:
            record.job.error.code = code
            record.job.error.message = message or ""

    return manager.jobs.update(job_id, change)


class JobRunner:
    """One job's state machine, run on its own thread."""

    def __init__(self, manager: JobManager, job_id: str) -> None:
        self.thread = threading.Thread(target=self.run, name=f"job-{job_id}", daemon=True)
        self.manager = manager
        self.settings = manager.settings
        self.job_id = job_id
        self._commands: queue.Queue[tuple[str, float | None]] = queue.Queue()
        # Set by cancel and shutdown so that a long grace period in progress is cut short.
        self._urgent = threading.Event()
        self._replicas: list[_Replica] = []
        self._pid_lock = threading.Lock()
        record = manager.jobs.get(job_id)
        assert record is not None
        self.project = record.project
        self._spec = record.job.job_spec
        scheduling = self._spec.scheduling
        self._restart_all = scheduling.restart_job_on_worker_restart and not (
            scheduling.disable_retries
        )
        self._max_restarts = 0 if scheduling.disable_retries else self.settings.max_restarts
        self._timeout_s = _seconds(scheduling.timeout) if scheduling.HasField("timeout") else None
        self._started_at: float | None = None
        # Preemptions armed for steps (admin PreemptJob with at_step): (step, grace_s), in
        # step order; each fires once.
        self._preempt_at: list[tuple[int, float]] = []
        self._preempt_lock = threading.Lock()

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
        """Preempt once any replica reports a `step` event at or past STEP: a deterministic
        moment for tests and the demo, however fast the machine trains. Several may be armed
        (the second for the run that resumes after the first); the lowest fires first."""
        with self._preempt_lock:
            self._preempt_at = sorted([*self._preempt_at, (step, grace_s)])

    def _check_armed_preemption(self, line: str) -> None:
        if not self._preempt_at or '"step"' not in line:
            return
        try:
            payload = json.loads(line)
        except ValueError:
            return
        if not isinstance(payload, dict) or payload.get("event") != "step":
            return
        step = payload.get("step")
        with self._preempt_lock:
            if not self._preempt_at or not isinstance(step, int) or step < self._preempt_at[0][0]:
                return
            _, grace_s = self._preempt_at.pop(0)
        self.send("preempt", grace_s)

    def pids(self) -> dict[str, int | None]:
        with self._pid_lock:
            return {r.task: (r.proc.pid if r.running and r.proc else None) for r in self._replicas}

    # -- the state machine -----------------------------------------------------------------

    def run(self) -> None:
        try:
            self._run()
        except Exception as exc:
            log.exception("job %s: emulator error", self.job_id)
            self._stop_replicas(self._replicas, 0)
            with contextlib.suppress(KeyError):
                self._finish(JobState.JOB_STATE_FAILED, CODE_INTERNAL, f"Emulator error: {exc}")
        finally:
            self.manager.runner_finished(self.job_id)

    def _run(self) -> None:
        record = self.manager.jobs.get(self.job_id)
        if record is None or record.terminal:
            return
        if record.state == JobState.JOB_STATE_CANCELLING:
            self._finish(JobState.JOB_STATE_CANCELLED, CODE_CANCELLED, "CANCELED")
            return
        resumed = bool(record.replicas)
        if record.state == JobState.JOB_STATE_QUEUED:
            self._service_line("Waiting for job to be provisioned.", logentries.INFO)
            if self._interrupted(self._wait(self.settings.queue_delay_s)):
                return
            self._set_state(JobState.JOB_STATE_PENDING)
        if record.state != JobState.JOB_STATE_RUNNING:
            self._service_line("Waiting for training program to start.", logentries.INFO)
            if self._interrupted(self._wait(self.settings.pending_delay_s)):
                return

        self._replicas = self._build(record)
        for path in environment.output_dirs(self.settings, self._spec).values():
            Path(path).mkdir(parents=True, exist_ok=True)
        for replica in self._replicas:
            if resumed:
                replica.restarts += 1
                self._count_restart()
                self._replica_line(
                    replica,
                    f"Restarting replica {replica.task} (restart {replica.restarts} of "
                    f"{self._max_restarts}) after the emulator restarted",
                    logentries.WARNING,
                )
            self._launch(replica)
        self._set_state(JobState.JOB_STATE_RUNNING)
        self._started_at = time.monotonic()
        self._monitor()

    def _build(self, record: JobRecord) -> list[_Replica]:
        specs = environment.build_replicas(
            settings=self.settings, project=self.project, job_id=self.job_id, job_spec=self._spec
        )
        return [
            _Replica(spec=s, restarts=int(record.replicas.get(s.task_name, {}).get("restarts", 0)))
            for s in specs
        ]

    def _interrupted(self, command: tuple[str, float | None] | None) -> bool:
        """Handle a command that arrived while no replica runs; True if the runner must stop."""
        if command is None:
            return False
        if command[0] == "cancel":
            self._finish(JobState.JOB_STATE_CANCELLED, CODE_CANCELLED, "CANCELED")
            return True
        return command[0] == "shutdown"

    def _wait(self, seconds: float) -> tuple[str, float | None] | None:
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
                command: tuple[str, float | None] | None = self._commands.get(timeout=_TICK_S)
            except queue.Empty:
                command = None
            if command is not None:
                name, arg = command
                if name == "cancel":
                    self._cancel()
                    return
                if name == "shutdown":
                    self._urgent.clear()
                    self._service_line("Emulator stopping: replicas stopped.", logentries.INFO)
                    self._stop_replicas(self._replicas, min(self.settings.cancel_grace_s, 3.0))
                    return
                if name == "preempt" and self._preempt(
                    self.settings.preempt_grace_s if arg is None else arg
                ):
                    return
                continue
            if self._timed_out():
                return
            for replica in self._replicas:
                rc = replica.poll()
                if rc is not None and self._on_exit(replica, rc):
                    return

    def _timed_out(self) -> bool:
        if self._timeout_s is None or self._started_at is None:
            return False
        if time.monotonic() - self._started_at < self._timeout_s:
            return False
        self._stop_replicas(self._replicas, self.settings.cancel_grace_s)
        self._finish(
            JobState.JOB_STATE_FAILED,
            CODE_DEADLINE_EXCEEDED,
            f"The job ran longer than its scheduling.timeout of {self._timeout_s:g}s.",
        )
        return True

    def _on_exit(self, replica: _Replica, rc: int) -> bool:
        """React to a replica's exit; True when the job has ended."""
        self._reap(replica)
        others = [r for r in self._replicas if r is not replica]
        if rc == 0:
            if replica.task != PRIMARY:
                replica.done = True
                return False
            self._stop_replicas(others, self.settings.cancel_grace_s)
            self._finish(JobState.JOB_STATE_SUCCEEDED, None, None)
            return True
        if replica.restarts >= self._max_restarts:
            self._stop_replicas(others, self.settings.cancel_grace_s)
            restarted = f" after {replica.restarts} restarts" if replica.restarts else ""
            message = (
                f"The replica {replica.task} exited with a non-zero status of {rc}{restarted}. "
                f"Termination reason: {describe_exit(rc)}."
            )
            self._replica_line(replica, message, logentries.ERROR)
            self._finish(JobState.JOB_STATE_FAILED, CODE_INTERNAL, message)
            return True
        replica.restarts += 1
        self._count_restart()
        self._replica_line(
            replica,
            f"Restarting replica {replica.task} (restart {replica.restarts} of "
            f"{self._max_restarts}), exit code {rc}",
            logentries.WARNING,
        )
        if not self._restart_all:
            self._launch(replica)
            return False
        self._stop_replicas(others, self.settings.cancel_grace_s)
        for other in others:
            self._replica_line(
                other,
                f"Restarting replica {other.task} with the whole job "
                f"(restart_job_on_worker_restart): {replica.task} exited with code {rc}",
                logentries.WARNING,
            )
        for r in self._replicas:
            r.done = False
            self._launch(r)
        return False

    def _cancel(self) -> None:
        # The cancel's own grace period is the full one; `_urgent` only shortens earlier ones.
        self._urgent.clear()
        self._stop_replicas(self._replicas, self.settings.cancel_grace_s)
        self._finish(JobState.JOB_STATE_CANCELLED, CODE_CANCELLED, "CANCELED")

    def _preempt(self, grace_s: float) -> bool:
        """A spot VM reclaimed: every replica gets SIGTERM, `grace_s`, SIGKILL; the job is then
        provisioned again and every replica restarted. True when the job has ended."""
        record = self.manager.jobs.update(self.job_id, _add_preemption)
        self._service_line(
            f"Spot VM preempted (preemption {record.preemption_count}): replicas get SIGTERM "
            f"and {grace_s:g}s before SIGKILL.",
            logentries.WARNING,
        )
        codes = self._stop_replicas(self._replicas, grace_s)
        for replica in self._replicas:
            rc = codes.get(replica.task)
            self._replica_line(
                replica,
                f"Replica {replica.task} was preempted"
                + (f", exit code {rc}" if rc is not None else ""),
                logentries.WARNING,
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
        for replica in self._replicas:
            replica.done = False
            self._replica_line(
                replica, f"Restarting replica {replica.task} after preemption", logentries.WARNING
            )
            self._launch(replica)
        self._set_state(JobState.JOB_STATE_RUNNING)
        return False

    # -- processes -------------------------------------------------------------------------

    def _pid_file(self, replica: _Replica) -> Path:
        return self.settings.jobs_dir / self.job_id / f"{replica.task}.pid"

    def _launch(self, replica: _Replica) -> None:
        spec = replica.spec
        try:
            proc = subprocess.Popen(
                spec.argv,
                cwd=self.settings.workdir,
                env=spec.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except (OSError, ValueError, IndexError) as exc:
            # As a container whose command does not exist: it exits at once with 127.
            self._replica_line(replica, f"Could not start {spec.argv!r}: {exc}", logentries.ERROR)
            replica.launch_rc = 127
            return
        with self._pid_lock:
            replica.proc = proc
        pid_file = self._pid_file(replica)
        pid_file.parent.mkdir(parents=True, exist_ok=True)
        pid_file.write_text(f"{proc.pid}\n")
        assert proc.stdout is not None and proc.stderr is not None
        replica.readers = [
            self._reader(replica, proc.stdout, logentries.INFO),
            self._reader(replica, proc.stderr, logentries.ERROR),
        ]
        self._save_replica(replica)
        log.info("job %s: started %s (pid %d)", self.job_id, replica.task, proc.pid)

    def _reader(self, replica: _Replica, stream: IO[bytes], severity: int) -> threading.Thread:
        def read() -> None:
            with stream:
                for raw in iter(stream.readline, b""):
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if line.strip():
                        self._replica_line(replica, line, severity)

        thread = threading.Thread(target=read, name=f"{self.job_id}-{replica.task}", daemon=True)
        thread.start()
        return thread

    def _reap(self, replica: _Replica) -> int | None:
        """Collect an exited replica: kill what it left in its group, drain its output."""
        proc = replica.proc
        if proc is None:
            return None
        rc = proc.wait()
        # Its children die with it, as in a container; this also closes their copies of the
        # pipes, so the readers see end of file.
        processes.signal_group(proc.pid, signal.SIGKILL)
        for thread in replica.readers:
            thread.join(timeout=5)
        with self._pid_lock:
            replica.proc = None
        replica.readers = []
        self._pid_file(replica).unlink(missing_ok=True)
        self._save_replica(replica)
        return rc

    def _stop_replicas(self, replicas: list[_Replica], grace_s: float) -> dict[str, int]:
        """SIGTERM the replicas' groups, SIGKILL after `grace_s`; their exit codes.

        Replicas that already exited but were not collected yet are collected too.
        """
        started = [r for r in replicas if r.proc is not None]
        for r in started:
            if r.running:
                assert r.proc is not None
                processes.signal_group(r.proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + grace_s
        while any(r.running for r in started):
            now = time.monotonic()
            if self._urgent.is_set():
                deadline = min(deadline, now + _URGENT_GRACE_S)
            if now >= deadline:
                break
            time.sleep(0.05)
        codes = {}
        for r in started:
            if r.running:
                assert r.proc is not None
                processes.signal_group(r.proc.pid, signal.SIGKILL)
            rc = self._reap(r)
            if rc is not None:
                codes[r.task] = rc
        for r in replicas:
            # A pending launch failure is moot once the replica is stopped.
            r.launch_rc = None
        return codes

    # -- state and logs --------------------------------------------------------------------

    def _save_replica(self, replica: _Replica) -> None:
        pid = replica.proc.pid if replica.proc is not None else None

        def change(record: JobRecord) -> None:
            record.replicas[replica.task] = {
                "pid": pid,
                "restarts": replica.restarts,
                "port": replica.spec.port,
            }

        self.manager.jobs.update(self.job_id, change)

    def _count_restart(self) -> None:
        def change(record: JobRecord) -> None:
            record.restart_count += 1

        self.manager.jobs.update(self.job_id, change)

    def _set_state(self, state: int) -> None:
        def change(record: JobRecord) -> None:
            # A cancel request wins over the runner moving on; nothing leaves a terminal state.
            if record.terminal or record.state == JobState.JOB_STATE_CANCELLING:
                return
            now = timeutil.to_timestamp(time.time_ns())
            record.job.state = state
            record.job.update_time.CopyFrom(now)
            if state == JobState.JOB_STATE_RUNNING and not record.job.HasField("start_time"):
                record.job.start_time.CopyFrom(now)

        self.manager.jobs.update(self.job_id, change)
        log.info("job %s: %s", self.job_id, JobState(state).name)

    def _finish(self, state: int, code: int | None, message: str | None) -> None:
        lines = {
            JobState.JOB_STATE_SUCCEEDED: ("Job completed successfully.", logentries.INFO),
            JobState.JOB_STATE_FAILED: (f"Job failed. {message}", logentries.ERROR),
            JobState.JOB_STATE_CANCELLED: ("Job was cancelled.", logentries.INFO),
        }
        if state in lines:
            self._service_line(*lines[state])
        # Every line the job printed is stored before clients can see that it ended.
        self.manager.logs.flush(timeout=10)
        finish_record(self.manager, self.job_id, state, code, message)
        with contextlib.suppress(OSError):
            (self.settings.jobs_dir / self.job_id).rmdir()
        log.info("job %s: %s", self.job_id, JobState(state).name)

    def _service_line(self, line: str, severity: int) -> None:
        self.manager.log_line(self.project, self.job_id, None, line, severity, SERVICE_LOG_ID)

    def _replica_line(self, replica: _Replica, line: str, severity: int) -> None:
        self.manager.log_line(self.project, self.job_id, replica.task, line, severity)
        self._check_armed_preemption(line)


def _add_preemption(record: JobRecord) -> None:
    record.preemption_count += 1


def _seconds(duration: duration_pb2.Duration) -> float:
    return duration.seconds + duration.nanos / 1e9
