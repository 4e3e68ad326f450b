"""The emulator's registry of running jobs: one JobRunner (runner.py) per job, which it hosts
(runner.JobHost: the settings, the store, capacity, the log)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from localvertex.cloudlogging.entries import from_line
from localvertex.cloudlogging.store import LogStore
from localvertex.config import Settings
from localvertex.core.timeutil import MonotonicClock
from localvertex.jobs.runner import JobRunner
from localvertex.jobs.store import JobState, JobStore
from localvertex.jobs.updates import CODE_CANCELLED, finish_record
from localvertex.quotas.capacity import Capacity
from localvertex.replicas import job_network
from localvertex.replicas.processes import kill_strays

log = logging.getLogger(__name__)


class JobManager:
    """The emulator's jobs: starts a runner per job and routes requests to it."""

    def __init__(self, settings: Settings, jobs: JobStore, logs: LogStore) -> None:
        self.settings = settings
        self.jobs = jobs
        self.logs = logs
        self.clock = MonotonicClock()
        # Quotas and stockouts, per region (the admin service and --quota set them).
        self.capacity = Capacity()
        # The RUNNING PersistentResource of a name, or None (server.py wires in the service):
        # a CustomJob placed on one starts on its nodes, without the provisioning delay.
        self.persistent_resource: Callable[[str], Any] = lambda name: None
        self._runners: dict[str, JobRunner] = {}
        self._lock = threading.Lock()
        self._stopping = False

    # -- log lines -------------------------------------------------------------------------

    def log_line(
        self,
        project: str,
        job_id: str,
        task_name: str | None,
        line: str,
        severity: int,
        log_id: str | None = None,
    ) -> None:
        self.logs.append(
            from_line(
                project=project,
                job_id=job_id,
                task_name=task_name,
                line=line,
                default_severity=severity,
                timestamp_ns=self.clock.now_ns(),
                insert_id=self.logs.next_insert_id(),
                log_id=log_id,
            )
        )

    def flush_logs(self, timeout: float) -> None:
        """Wait until every line appended so far is stored."""
        self.logs.flush(timeout=timeout)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, job_id: str) -> None:
        with self._lock:
            if self._stopping or job_id in self._runners:
                return
            runner = JobRunner(self, job_id)
            self._runners[job_id] = runner
        runner.start()

    def resume(self) -> None:
        """Take over the jobs an earlier emulator left unfinished (after killing its replicas)."""
        killed = kill_strays(self.settings.data_dir)
        if killed:
            log.info("killed %d replica processes left by an earlier emulator", killed)
        # Its jobs' network namespaces too: each job resumed here gets a fresh one.
        job_network.remove_stale(self.settings.data_dir)
        for record in self.jobs.unfinished():
            log.info("resuming job %s (%s)", record.id, JobState(record.state).name)
            self.start(record.id)

    def runner_finished(self, job_id: str) -> None:
        with self._lock:
            self._runners.pop(job_id, None)

    def _runner(self, job_id: str) -> JobRunner | None:
        with self._lock:
            return self._runners.get(job_id)

    def cancel(self, job_id: str) -> None:
        """Ask the job's runner to cancel; the caller has already set CANCELLING."""
        runner = self._runner(job_id)
        if runner is not None:
            runner.send("cancel")
            return
        # No runner (the job never started here, or the emulator is stopping): nothing runs.
        record = self.jobs.get(job_id)
        if record is not None and not record.terminal and not self._stopping:
            finish_record(self.jobs, record.id, JobState.JOB_STATE_CANCELLED, CODE_CANCELLED,
                          "CANCELED")

    def preempt(self, job_id: str, grace_s: float, at_step: int | None = None) -> bool:
        runner = self._runner(job_id)
        if runner is None:
            return False
        if at_step is None:
            runner.send("preempt", grace_s)
        else:
            runner.arm_preemption(at_step, grace_s)
        return True

    def live_pids(self, job_id: str) -> dict[str, int | None]:
        runner = self._runner(job_id)
        return runner.pids() if runner is not None else {}

    def replica_pids(self) -> list[tuple[str, str, dict[str, int | None]]]:
        """(job id, project, replica key -> pid) of every live runner: what the system
        metrics sampler (localvertex/monitoring/sampler.py) reads."""
        with self._lock:
            runners = list(self._runners.values())
        return [(r.job_id, r.project, r.pids()) for r in runners]

    def shutdown(self, timeout: float = 15.0) -> None:
        """Stop every runner (their replicas get SIGTERM, then SIGKILL); job states are kept."""
        with self._lock:
            self._stopping = True
            runners = list(self._runners.values())
        for runner in runners:
            runner.send("shutdown")
        deadline = time.monotonic() + timeout
        for runner in runners:
            runner.join(max(0.0, deadline - time.monotonic()))
        # Anything still alive now belongs to no runner.
        kill_strays(self.settings.data_dir)
