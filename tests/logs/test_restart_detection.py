"""Preemption and restart detection from stored events and log lines
(controlplane/logs/restarts.py)."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from controlplane.logs import restarts
from controlplane.logs.models import LogLine, StepMetric
from controlplane.runs.models import Job, JobAttempt, JobEvent, JobRestart

_ids = itertools.count(1)


class Log:
    """Writes what the follower would have stored for one job, a second apart."""

    def __init__(self, job: Job, attempt: int = 1) -> None:
        self.job = job
        self.attempt = attempt
        self.now: datetime = timezone.now() - timedelta(hours=1)

    def tick(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now

    def event(self, kind: str, replica: str = "workerpool0-0", step: int | None = None,
              **data: Any) -> JobEvent:
        at = self.tick()
        insert_id = f"e{next(_ids)}"
        LogLine.objects.create(job=self.job, attempt=self.attempt, timestamp=at,
                               replica=replica, message=data.get("text", kind),
                               insert_id=insert_id)
        return JobEvent.objects.create(job=self.job, attempt=self.attempt, kind=kind,
                                       timestamp=at, replica=replica, step=step,
                                       data={**data, **({"step": step} if step else {})},
                                       insert_id=insert_id)

    def line(self, text: str, replica: str = "") -> None:
        LogLine.objects.create(job=self.job, attempt=self.attempt, timestamp=self.tick(),
                               replica=replica, message=text, insert_id=f"l{next(_ids)}")

    def steps(self, first: int, last: int) -> None:
        for step in range(first, last + 1):
            StepMetric.objects.create(job=self.job, attempt=self.attempt, step=step,
                                      timestamp=self.tick(), loss=1.0,
                                      insert_id=f"s{next(_ids)}")

    def checkpoint(self, step: int) -> JobEvent:
        return self.event("checkpoint_saved", step=step, path=self._path(step))

    @staticmethod
    def _path(step: int) -> str:
        return f"gs://b/job/checkpoints/step-{step:08d}"

    def preemption(self, at_step: int, *, resume: bool = True) -> None:
        """What the emulator and the trainer print for one spot preemption."""
        self.line("Spot VM preempted (preemption 1): replicas get SIGTERM and 20s before "
                  "SIGKILL.")
        self.checkpoint(at_step)
        self.event("preempted", step=at_step, signal="SIGTERM",
                   checkpoint_path=self._path(at_step))
        self.line("Replica workerpool0-0 was preempted, exit code 143", "workerpool0-0")
        if resume:
            self.event("replica_restarted",
                       text="Restarting replica workerpool0-0 after preemption")
            self.event("run_started", rank=0, world_size=1, resumed_from_step=at_step)
            self.event("resumed", step=at_step, path=self._path(at_step))


def test_three_preemptions_three_restarts_each_linked_to_its_checkpoint(
        running_job: Job) -> None:
    log = Log(running_job)
    log.event("run_started", rank=0, world_size=1, resumed_from_step=None)
    position = 0
    for at_step in (12, 27, 41):
        log.steps(position + 1, at_step)
        log.preemption(at_step)
        position = at_step
    log.steps(42, 60)

    assert restarts.refresh(running_job.pk) == 3
    assert restarts.refresh(running_job.pk) == 3, "idempotent"
    assert restarts.refresh(running_job.pk, force=True) == 3
    records = list(JobRestart.objects.filter(job=running_job).order_by("ordinal"))
    assert [r.ordinal for r in records] == [1, 2, 3]
    for record, at_step in zip(records, (12, 27, 41), strict=True):
        assert record.cause == "preemption" and record.replica == "workerpool0-0"
        assert record.step == at_step and record.resumed_from_step == at_step
        assert record.steps_lost == 0
        assert record.checkpoint is not None and record.checkpoint.step == at_step
        assert {"preempted", "sigterm_line", "replica_restarted"} <= set(record.sources)
        assert record.resumed_at is not None and record.resumed_at > record.occurred_at
    running_job.refresh_from_db()
    assert running_job.restarts == 3


def test_a_preemption_is_noticed_before_the_replica_comes_back(running_job: Job) -> None:
    log = Log(running_job)
    log.event("run_started", rank=0, world_size=1, resumed_from_step=None)
    log.steps(1, 9)
    log.line("Spot VM preempted (preemption 1): replicas get SIGTERM and 30s before SIGKILL.")
    assert restarts.refresh(running_job.pk) == 1
    record = JobRestart.objects.get(job=running_job)
    assert record.cause == "preemption" and record.step == 9 and not record.resumed
    # The trainer's own event and the restart arrive: the same record is completed.
    log.checkpoint(10)
    log.event("preempted", step=10, signal="SIGTERM", checkpoint_path=log._path(10))
    log.event("replica_restarted", text="Restarting replica workerpool0-0 after preemption")
    log.event("run_started", rank=0, world_size=1, resumed_from_step=10)
    log.event("resumed", step=10, path=log._path(10))
    assert restarts.refresh(running_job.pk) == 1
    record.refresh_from_db()
    assert record.resumed and record.step == 10 and record.resumed_from_step == 10
    assert JobRestart.objects.filter(job=running_job).count() == 1


def test_a_replica_whose_log_starts_over_has_restarted(running_job: Job) -> None:
    log = Log(running_job)
    log.event("run_started", rank=0, world_size=1, resumed_from_step=None)
    log.steps(1, 30)
    log.checkpoint(20)
    log.event("run_started", rank=0, world_size=1, resumed_from_step=20)
    assert restarts.refresh(running_job.pk) == 1
    record = JobRestart.objects.get(job=running_job)
    assert record.cause == "restart" and record.sources == ["log_started_over"]
    assert record.step == 30 and record.resumed_from_step == 20 and record.steps_lost == 10


def test_crashes_and_emulator_restarts_without_a_trainer(running_job: Job) -> None:
    log = Log(running_job)
    log.event("replica_restarted", text="Restarting replica workerpool0-0 (restart 1 of 5), "
                                        "exit code 1")
    log.event("replica_restarted", text="Restarting replica workerpool0-0 (restart 2 of 5) "
                                        "after the emulator restarted")
    assert restarts.refresh(running_job.pk) == 2
    causes = list(JobRestart.objects.filter(job=running_job).order_by("ordinal")
                  .values_list("cause", flat=True))
    assert causes == ["crash", "backend"]


def test_sigterm_of_a_cancelled_job_is_not_a_preemption(running_job: Job) -> None:
    log = Log(running_job)
    log.event("run_started", rank=0, world_size=1, resumed_from_step=None)
    JobEvent.objects.create(job=running_job, attempt=1, kind="state", timestamp=log.tick(),
                            data={"from": "RUNNING", "to": "CANCELLING"})
    log.event("preempted", step=5, signal="SIGTERM", checkpoint_path="")
    log.line("Replica workerpool0-0 was stopped: received SIGTERM", "workerpool0-0")
    assert restarts.refresh(running_job.pk) == 0


def test_a_stockout_is_a_restart_resumed_by_the_next_attempt(running_job: Job) -> None:
    log = Log(running_job)
    log.event("run_started", rank=0, world_size=1, resumed_from_step=None)
    log.steps(1, 8)
    ended = log.tick()
    JobAttempt.objects.filter(job=running_job, number=1).update(
        ended_at=ended, failure="stockout", vertex_state="JOB_STATE_FAILED",
        error_message="The job was preempted 7 times (STOCKOUT).")
    assert restarts.refresh(running_job.pk) == 1
    record = JobRestart.objects.get(job=running_job)
    assert record.cause == "stockout" and record.step == 8 and not record.resumed
    JobAttempt.objects.create(job=running_job, number=2, display_name="a2",
                              started_at=log.tick(), reason="recovery")
    assert restarts.refresh(running_job.pk) == 1
    record.refresh_from_db()
    assert record.resumed


def test_the_processes_of_one_multi_gpu_replica_start_one_run(running_job: Job) -> None:
    log = Log(running_job)
    # One replica with two GPUs: the launcher starts a process per GPU, each says it started.
    log.event("run_started", rank=0, world_size=2, resumed_from_step=None)
    log.event("run_started", rank=1, world_size=2, resumed_from_step=None)
    log.steps(1, 30)
    assert restarts.refresh(running_job.pk) == 0
    # The same ranks starting again is the replica starting over.
    log.event("run_started", rank=1, world_size=2, resumed_from_step=None)
    log.event("run_started", rank=0, world_size=2, resumed_from_step=None)
    assert restarts.refresh(running_job.pk) == 1
