"""A resubmission from a chosen checkpoint of a team's own framework's job passes that
framework's resume argument (vertexplan/composer/resume_flags.py), replacing any it had, and
checks the checkpoint by that framework's own sign of completeness (issue 36)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from controlplane.logs.models import StepMetric
from controlplane.logs.store import Target, store_entries
from controlplane.runs.models import Job, JobAttempt
from tests.fakes import FakeBackend
from vertexplan.composer.resume_flags import resume_args
from vertexplan.logparse.entries import LogEntry


@pytest.fixture
def api(client: Client, admin_user: Any) -> Client:
    client.force_login(admin_user)
    return client


def test_resume_args_replace_the_frameworks_own_and_keep_the_rest() -> None:
    args = ["train.py", "--lr", "1e-4", "--resume_from_checkpoint", "old", "--x=1"]
    assert resume_args("accelerate", args, "gs://b/t/checkpoint-20") == [
        "train.py", "--lr", "1e-4", "--x=1", "--resume_from_checkpoint", "/gcs/b/t/checkpoint-20"]
    assert resume_args("hf_trainer", ["--resume_from_checkpoint=old"], "/gcs/b/c-1") == [
        "--resume_from_checkpoint", "/gcs/b/c-1"]
    assert resume_args("lightning", ["fit", "--ckpt_path", "a"], "/gcs/b/e.ckpt") == [
        "fit", "--ckpt_path", "gs://b/e.ckpt"]
    assert resume_args("torchtitan", [], "gs://b/t/step-30")[-2:] == [
        "--checkpoint.initial_load_path", "gs://b/t/step-30"]
    assert resume_args("maxtext", ["run_name=r", "load_parameters_path=gs://old"],
                       "gs://b/r/30/items") == ["run_name=r", "load_parameters_path=gs://b/r/30/items"]
    assert resume_args(None, ["--x"], "gs://b/p") is None
    assert resume_args("builtin", ["--x"], "gs://b/p") is None


def test_an_hf_jobs_resubmission_resumes_it_with_its_own_argument(
        api: Client, make_job: Callable[..., Job], backend: FakeBackend,
        checkpoint_storage: Callable[[str], str], django_capture_on_commit_callbacks: Any
        ) -> None:
    job = make_job("hf", image_uri="us-docker.pkg.dev/p/t:1",
                   command=["accelerate", "launch", "train.py"],
                   args=["--resume_from_checkpoint", "none", "--num_train_epochs", "3"])
    # As the HF Trainer's line names it: the bucket through Vertex's FUSE mount.
    fuse = "/gcs/b/hf/checkpoint-20"
    job.events.create(kind="checkpoint_saved", attempt=1, step=20,
                      data={"step": 20, "path": fuse})
    folder = Path(settings.CP_LOCAL_GCS_ROOT) / "b" / "hf" / "checkpoint-20"
    folder.mkdir(parents=True)
    half = api.post(f"/api/v1/jobs/{job.pk}/resubmit/", {"checkpoint_step": 20},
                    content_type="application/json")
    assert half.status_code == 400 and "no trainer_state.json or" in half.content.decode()
    # As Trainer writes it (the keys read; the rest of the file is left).
    (folder / "trainer_state.json").write_text(json.dumps(
        {"global_step": 20, "logging_steps": 10, "max_steps": 40, "log_history": []}))
    with django_capture_on_commit_callbacks(execute=False):
        done = api.post(f"/api/v1/jobs/{job.pk}/resubmit/", {"checkpoint_step": 20},
                        content_type="application/json")
    assert done.status_code == 201, done.content
    new = Job.objects.get(pk=done.json()["id"])
    assert new.request["args"] == ["--num_train_epochs", "3", "--resume_from_checkpoint", fuse]
    container = new.custom_job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    assert container["args"][-2:] == ["--resume_from_checkpoint", fuse]
    assert new.resume_from_step == 20
    # Its first loss line is already at its exact step: the checkpoint's trainer_state.json
    # told the interval and the total before any line.
    JobAttempt.objects.filter(job=new).update(vertex_job_id="77")
    log = [LogEntry(insert_id=f"n{i}", timestamp=datetime(2026, 5, 1, 0, 0, i, tzinfo=UTC),
                    severity=200, job_id="77", task_name="workerpool0-0", json_payload=None,
                    text_payload=text, log_name=f"projects/{new.project}/logs/workerpool0-0")
           for i, text in enumerate([
               "[transformers]   Resuming training from checkpoint with epoch 0 and global "
               "step 20",
               "{'loss': '2.1', 'grad_norm': '1.0', 'learning_rate': '1e-05', 'epoch': '1.5'}"])]
    store_entries(log, {"77": Target(new.pk, 1)})
    assert list(StepMetric.objects.filter(job=new).values_list("step", flat=True)) == [30]
    new.refresh_from_db()
    assert new.total_steps == 40


def test_an_accelerate_loops_checkpoint_is_complete_by_its_random_states(
        checkpoint_storage: Callable[[str], str], settings: Any) -> None:
    from controlplane.backends import storage
    from vertexplan.composer.resume_flags import RESUMES
    folder = Path(settings.CP_LOCAL_GCS_ROOT) / "b" / "run" / "step_300"
    folder.mkdir(parents=True)
    marker = RESUMES["accelerate"].marker
    half = storage.check_checkpoint("/gcs/b/run/step_300", marker)
    assert not half.complete and "trainer_state.json or random_states_0.pkl" in half.why
    (folder / "random_states_0.pkl").write_bytes(b"\x80\x04N.")
    assert storage.check_checkpoint("gs://b/run/step_300", marker).complete
