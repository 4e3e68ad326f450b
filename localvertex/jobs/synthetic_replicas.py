"""Synthetic mode (`python -m localvertex --synthetic`): a job's replicas are timers, not
processes, so a scale test runs thousands of jobs on one machine.

SyntheticReplicas answers the job runner's calls as replicas/job_replicas.ReplicaProcesses does
(open, launch, reap, stop, pids, close), and the runner's state machine is the same: QUEUED,
PENDING, RUNNING, restarts, preemptions, SUCCEEDED, FAILED, CANCELLED happen as for real
replicas, and the log carries what the product's trainer prints (contract/events.py), so the
control plane cannot tell. Only the process is replaced:

- The chief (workerpool0-0) prints `run_started`, then a `step` line (loss, lr, tokens_per_s,
  step_time_s) every step_s seconds on the shared timer thread (synthetic_timer.py), a
  `checkpoint_saved` every checkpoint_every steps when the job has an output directory, and
  `run_finished` at its last step, then exits 0. A restarted chief prints `resumed` and goes on
  from its last checkpoint (from step 0 without one), as the trainers do.
- The other replicas print `run_started` and run until they are stopped.
- The schedule (synthetic_schedule.py, given by the job or drawn from the seeded RNG) says at
  which steps the job's VM is preempted (the runner's own "preempt", as admin PreemptJob) and
  at which the chief fails (an `error` line, exit status 1; the runner restarts it or fails
  the job as its restart policy says).
- SIGTERM (a stop: preemption, cancel, another replica's end) is handled as the trainers
  handle it: the chief saves a checkpoint, prints `preempted` and exits 0, at once.

A replica that ends wakes its runner (`send(WAKE)`) instead of being polled for.
State lives in this object, which lives as long as the job's runner: an emulator restart
starts a synthetic job's replicas again from step 0.
"""

from __future__ import annotations

import json
import math
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from contract import events as contract_events
from localvertex.cloudlogging.entries import ERROR, INFO
from localvertex.config import Settings
from localvertex.jobs.synthetic_schedule import Schedule, for_job
from localvertex.jobs.synthetic_timer import Timer, shared
from localvertex.replicas.job_replicas import Replica

PRIMARY = "workerpool0-0"
# The command a runner gets when one of its synthetic replicas has ended: poll them now.
WAKE = "wake"
PREEMPT = "preempt"
# What a synthetic chief says it trains on (run_started): the tiny preset's shape.
_PARAMS = 10_752
_TOKENS_PER_STEP = 8 * 64


@dataclass
class SyntheticProcess:
    """A replica's stand-in for its Popen: poll() gives its exit status once it has ended.
    No pid: nothing runs that anyone could signal."""

    pid: None = None
    returncode: int | None = None

    def poll(self) -> int | None:
        return self.returncode

    def wait(self) -> int | None:
        return self.returncode


Send = Callable[..., None]
LineSink = Callable[[Replica, str, int], None]


class SyntheticReplicas:
    def __init__(self, settings: Settings, job_id: str, job, on_line: LineSink,
                 on_saved: Callable[[Replica], None], send: Send,
                 timer: Timer | None = None) -> None:
        self.job_id = job_id
        self.schedule: Schedule = for_job(job.job_spec, job_id, settings.synthetic_seed,
                                          settings.synthetic_step_s)
        self._on_line = on_line
        self._on_saved = on_saved
        self._send = send
        self._timer = timer or shared()
        # The loss curve's noise, the same for the same job on every run.
        self._rng = random.Random(f"{settings.synthetic_seed}:{job_id}:loss")
        self._lock = threading.Lock()
        self._step = 0              # the chief's last step in this run
        self._checkpoint = 0        # its last checkpoint's step (0: none)
        self._preempt_at = list(self.schedule.preempt_at)
        self._failed = 0            # how many runs failed at fail_at

    # -- what the runner calls, as on ReplicaProcesses --------------------------------------

    def open(self) -> None:
        """No user to run as and no network to make: nothing runs."""
        return None

    def close(self) -> None:
        pass

    def pids(self, replicas: list[Replica]) -> dict[str, int | None]:
        return {r.key: None for r in replicas}

    def launch(self, replica: Replica) -> None:
        process = SyntheticProcess()
        with self._lock:
            replica.proc = process  # type: ignore[assignment]  # a Popen's stand-in
            resumed = self._checkpoint if replica.key == PRIMARY else None
            self._print(replica, contract_events.RUN_STARTED, rank=_rank(replica),
                        world_size=int(replica.spec.env.get("WORLD_SIZE", "1")),
                        strategy="ddp", params=_PARAMS, resumed_from_step=resumed or None)
            if replica.key == PRIMARY:
                if resumed:
                    self._print(replica, contract_events.RESUMED, step=resumed,
                                path=self._checkpoint_path(replica, resumed))
                self._step = resumed or 0
                self._next_tick(replica, process)
        self._on_saved(replica)

    def reap(self, replica: Replica) -> int | None:
        with self._lock:
            process = replica.proc
            replica.proc = None
        if process is None:
            return None
        self._on_saved(replica)
        return process.returncode

    def stop(self, replicas: list[Replica], grace_s: float) -> dict[str, int]:
        """SIGTERM: each running replica ends at once (the chief after saving and saying
        `preempted`); their exit codes."""
        with self._lock:
            for replica in replicas:
                process = replica.proc
                if process is None or process.returncode is not None:
                    continue
                if replica.key == PRIMARY:
                    path = self._save(replica, self._step)
                    self._print(replica, contract_events.PREEMPTED, signal="SIGTERM",
                                step=self._step, checkpoint_path=path)
                process.returncode = 0
        codes = {}
        for replica in replicas:
            rc = self.reap(replica)
            if rc is not None:
                codes[replica.key] = rc
            replica.launch_rc = None
        return codes

    # -- the chief's steps, on the timer's thread -------------------------------------------

    def _next_tick(self, replica: Replica, process: SyntheticProcess) -> None:
        self._timer.call_at(time.monotonic() + self.schedule.step_s,
                            lambda: self._tick(replica, process))

    def _tick(self, replica: Replica, process: SyntheticProcess) -> None:
        with self._lock:
            if replica.proc is not process or process.returncode is not None:
                return  # stopped since: this run's ticks are over
            s = self.schedule
            self._step += 1
            step = self._step
            self._print(replica, contract_events.STEP, step=step, total_steps=s.steps,
                        loss=round(self._loss(step), 4), lr=3e-4,
                        tokens_per_s=round(_TOKENS_PER_STEP / s.step_s, 1),
                        step_time_s=s.step_s)
            # A failure comes before the step's checkpoint: a restarted run, resumed from an
            # earlier one, gets to fail_at again.
            if s.fails_at(step, self._failed):
                self._failed += 1
                self._print(replica, contract_events.ERROR, severity="ERROR", rank=0,
                            error_type="RuntimeError",
                            message=f"synthetic failure at step {step} (fail_at)")
                self._exit(process, 1)
                return
            if s.checkpoint_every and step % s.checkpoint_every == 0:
                self._save(replica, step)
            if self._preempt_at and self._preempt_at[0] <= step:
                self._preempt_at.pop(0)
                # The VM is reclaimed: the runner stops every replica (SIGTERM, stop()) and
                # starts them again once the job is provisioned anew.
                self._send(PREEMPT, None)
                return
            if step >= s.steps:
                self._print(replica, contract_events.RUN_FINISHED, step=step,
                            final_loss=round(self._loss(step), 4),
                            wall_s=round(step * s.step_s, 3))
                self._exit(process, 0)
                return
            self._next_tick(replica, process)

    def _exit(self, process: SyntheticProcess, rc: int) -> None:
        process.returncode = rc
        self._send(WAKE)

    # -- lines -------------------------------------------------------------------------------

    def _loss(self, step: int) -> float:
        decay = math.exp(-3.0 * step / max(self.schedule.steps, 1))
        return 0.5 + 4.0 * decay + self._rng.uniform(-0.02, 0.02)

    def _save(self, replica: Replica, step: int) -> str | None:
        """A checkpoint at `step` where the job has an output directory; its path."""
        path = self._checkpoint_path(replica, step)
        if path is None or step <= 0:
            return None
        if step > self._checkpoint:
            self._print(replica, contract_events.CHECKPOINT_SAVED, step=step, path=path,
                        bytes=4 * _PARAMS * 3, seconds=0.01)
            self._checkpoint = step
        return path

    @staticmethod
    def _checkpoint_path(replica: Replica, step: int) -> str | None:
        folder = replica.spec.env.get("AIP_CHECKPOINT_DIR")
        return f"{folder.rstrip('/')}/step-{step}" if folder else None

    def _print(self, replica: Replica, event: str, severity: str = "INFO", **fields) -> None:
        line = json.dumps({"event": event, "severity": severity, **fields})
        self._on_line(replica, line, ERROR if severity == "ERROR" else INFO)


def _rank(replica: Replica) -> int:
    try:
        return int(replica.spec.env.get("RANK", "0"))
    except ValueError:
        return 0
