"""A job's events are believed only when they are the job's own: entries from its replicas'
logs, paths under its own output prefix. Everything else is refused or recorded as suspicious,
and nothing that reads checkpoints (resubmission, recovery, the model registry) sees it."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from controlplane.compose import submission
from controlplane.logs import trust
from controlplane.logs.models import LogLine, StepMetric
from controlplane.logs.store import Target, store_entries
from controlplane.runs import checkpoints
from controlplane.runs.models import Job
from controlplane.serving import registry
from tests.logs.conftest import followed_job
from tests.runs.pages.conftest import CPU_CUSTOM_JOB
from vertexplan.logparse.entries import LogEntry

PROJECT = "p"
VICTIM_PREFIX = "gs://cp-local-bucket/jobs/vision/job-victim"
ATTACKER_CKPT = "gs://cp-local-bucket/jobs/speech/job-9/checkpoints/step-00000999"
_ids = itertools.count(1)
T0 = datetime(2026, 5, 1, tzinfo=UTC)


@pytest.fixture
def victim(db: None) -> Job:
    return followed_job({**CPU_CUSTOM_JOB, "jobSpec": {
        **CPU_CUSTOM_JOB["jobSpec"], "baseOutputDirectory": {"outputUriPrefix": VICTIM_PREFIX}}})


Write = Callable[..., Any]


@pytest.fixture
def write(victim: Job) -> Write:
    def entry(payload: dict[str, Any], *, task: str = "workerpool0-0",
              log_name: str | None = None) -> Any:
        n = next(_ids)
        made = LogEntry(insert_id=f"e{n}", timestamp=T0 + timedelta(seconds=n), severity=200,
                        job_id="42", task_name=task, json_payload=payload,
                        log_name=f"projects/{PROJECT}/logs/{task}" if log_name is None
                        else log_name)
        return store_entries([made], {"42": Target(victim.pk, 1)})
    return entry


def test_paths_under_the_prefix_segment_by_segment(settings: Any) -> None:
    settings.CP_LOCAL_STORAGE_ROOT = "/srv/emu/gcs"
    prefix = "gs://b/jobs/vision/job-1"
    assert trust.under_prefix("gs://b/jobs/vision/job-1/checkpoints/step-1", prefix)
    assert trust.under_prefix("/gcs/b/jobs/vision/job-1/model/", prefix)
    assert trust.under_prefix("/srv/emu/gcs/b/jobs/vision/job-1/checkpoints/x", prefix)
    for outside in ("gs://b/jobs/vision/job-10/checkpoints/x",     # a sibling's prefix
                    "gs://b/jobs/vision/job-1/../../speech/job-9/x",
                    "gs://b/jobs/vision/job-1/./x",
                    "gs://other/jobs/vision/job-1/x",
                    "/srv/emu/gcs/b/jobs/vision/job-1/x\n",
                    "/tmp/evil/gcs/b/jobs/vision/job-1/x",             # not the storage root
                    "/srv/emu/gcs/../b/jobs/vision/job-1/x",
                    "b/jobs/vision/job-1/x", "", None, 5):
        assert not trust.under_prefix(outside, prefix), outside


def test_a_checkpoint_outside_the_prefix_is_suspicious_and_ignored(victim: Job,
                                                                   write: Write) -> None:
    write({"event": "checkpoint_saved", "step": 10, "path": f"{VICTIM_PREFIX}/checkpoints/s10"})
    write({"event": "checkpoint_saved", "step": 999, "path": ATTACKER_CKPT})
    write({"event": "resumed", "step": 999, "path": ATTACKER_CKPT})
    write({"event": "preempted", "step": 999, "checkpoint_path": f"{VICTIM_PREFIX}/../x"})
    saved = list(victim.events.filter(kind="checkpoint_saved"))
    assert [e.step for e in saved] == [10]
    odd = victim.events.filter(kind=trust.SUSPICIOUS).order_by("timestamp")
    assert [e.data["event"] for e in odd] == ["checkpoint_saved", "resumed", "preempted"]
    assert "outside the job's output prefix" in odd[0].data["reason"]
    assert "path" not in odd[0].data
    assert not victim.events.filter(kind__in=("resumed", "preempted")).exists()
    # Nothing that reads checkpoints sees step 999.
    newest = checkpoints.newest(victim)
    assert newest is not None and newest.step == 10
    assert registry.checkpoint_steps(victim) == [10]
    with pytest.raises(registry.RegistryError):
        registry.artifact_for(victim, 999)
    with pytest.raises(submission.ResubmitError):
        submission.resubmit(victim, user=victim.created_by, checkpoint_step=999)


def test_a_resubmitted_job_may_name_the_checkpoint_it_was_started_from(victim: Job,
                                                                      write: Write) -> None:
    """A team's own framework names the folder it loads (Accelerate's load_state, DeepSpeed's
    load_checkpoint), under the earlier job's prefix: the resumed event may name exactly the
    checkpoint the control plane started the job from (its resume_from), nothing else."""
    chosen = "gs://cp-local-bucket/jobs/vision/job-1/checkpoints/step_6"
    Job.objects.filter(pk=victim.pk).update(resume_from=chosen)
    write({"event": "resumed", "step": 6, "path": "/gcs/cp-local-bucket/jobs/vision/job-1/"
                                                  "checkpoints/step_6/"})
    write({"event": "resumed", "step": 999, "path": ATTACKER_CKPT})
    write({"event": "checkpoint_saved", "step": 6, "path": chosen})  # not its own to list
    assert [(e.kind, e.step) for e in victim.events.order_by("timestamp")] == [
        ("resumed", 6), (trust.SUSPICIOUS, 999), (trust.SUSPICIOUS, 6)]


def test_entries_not_from_the_jobs_replicas_are_refused(victim: Job, write: Write) -> None:
    write({"event": "step", "step": 1, "loss": 2.0}, task="workerpool0-0")
    # Another job writing with this job's id, through the Logging API: wrong log name, a
    # replica the job does not have, a pool it does not have, no replica at all.
    write({"event": "step", "step": 999, "loss": 0.0}, log_name=f"projects/{PROJECT}/logs/x")
    write({"event": "step", "step": 998, "loss": 0.0}, task="workerpool0-5")
    write({"event": "step", "step": 997, "loss": 0.0}, task="workerpool1-0")
    write({"event": "run_finished", "step": 996}, task="")
    write({"event": "step", "step": 995, "loss": 0.0},
          log_name="projects/other-project/logs/workerpool0-0")
    assert list(StepMetric.objects.filter(job=victim).values_list("step", flat=True)) == [1]
    assert LogLine.objects.filter(job=victim).count() == 1
    assert not victim.events.filter(kind="run_finished").exists()
    victim.refresh_from_db()
    assert victim.last_step == 1
    # Vertex's own messages about the job (no replica, no event) are still the job's.
    write({"message": "Job completed successfully."}, task="", log_name=f"projects/{PROJECT}/"
          "logs/ml.googleapis.com%2F42")
    assert LogLine.objects.filter(job=victim).count() == 2
