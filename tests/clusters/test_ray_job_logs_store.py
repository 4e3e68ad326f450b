"""A Ray job has its own job (kind ray): its output, read from Ray's Job API, goes into the log
store as that job's lines, each line once however often it is re-read, so the trainers' step,
checkpoint and run_finished events become step metrics, events and checkpoints as for a
CustomJob; its state follows the Ray job's, and it is never on the job path."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from controlplane.clusters import lifecycle
from controlplane.clusters.models import Cluster, RayJob
from controlplane.logs.models import LogLine, StepMetric
from controlplane.runs import lifecycle as runs_lifecycle
from controlplane.runs.models import Job, JobKind, JobState
from tests.clusters.test_api import api, running

pytestmark = pytest.mark.django_db
WORKER = "(RayTrainWorker pid=7377)"


def event(**fields: Any) -> str:
    return f"{WORKER} " + json.dumps({"severity": "INFO", "message": fields["event"], **fields})


def submitted(member: Any) -> tuple[Cluster, RayJob]:
    cluster = running(member)
    ray_job = lifecycle.submit_ray_job(cluster=cluster, user=member,
                                       entrypoint=["python", "-m", "trainers.ray_train"])
    return cluster, ray_job


def test_a_ray_job_gets_one_job_and_its_output_is_stored_once(member, queued, ray) -> None:
    cluster, ray_job = submitted(member)
    job = ray_job.job
    assert job.kind == JobKind.RAY and job.team == cluster.team and job.state == "QUEUED"
    assert job.attempts.get().display_name == ray_job.submission_id
    checkpoints = ray_job.job.output_uri + "/checkpoints/"
    assert lifecycle.advance_ray_job(ray_job.pk)
    # The trainer is told to write under the job's folder, as a CustomJob's replicas are.
    env = ray.submitted[0]["env"]
    assert env["AIP_CHECKPOINT_DIR"].endswith(f"/job-{job.pk}/checkpoints/")
    ray.output = "\n".join([
        "Starting the run", event(event="run_started", rank=0, world_size=2),
        event(event="run_started", rank=1, world_size=2),
        event(event="step", step=1, total_steps=2, loss=3.5),
        event(event="checkpoint_saved", step=1, path=checkpoints + "step-1"),
        "(RayTrainWorker pid=7377) half a li"])  # no newline yet: it waits
    assert lifecycle.advance_ray_job(ray_job.pk)
    job.refresh_from_db()
    assert job.state == JobState.RUNNING and job.started_at is not None
    assert LogLine.objects.filter(job=job).count() == 5
    assert list(StepMetric.objects.filter(job=job).values_list("step", "loss")) == [(1, 3.5)]
    assert job.restarts == 0  # two ranks' run_started are two replicas, not a restart
    # Ray may forward one worker line twice: its event is stored once.
    ray.output += "ne\n" + event(event="step", step=2, total_steps=2, loss=2.5) + "\n" + \
        event(event="step", step=2, total_steps=2, loss=2.5) + "\n" + \
        event(event="run_finished", step=2, final_loss=2.5, wall_s=3.0) + "\n"
    assert lifecycle.advance_ray_job(ray_job.pk)  # re-read: the same lines stored once
    ray.status = "SUCCEEDED"
    assert not lifecycle.advance_ray_job(ray_job.pk)
    job.refresh_from_db()
    lines = list(LogLine.objects.filter(job=job).order_by("timestamp", "insert_id")
                 .values_list("message", flat=True))
    assert len(lines) == 8 and lines[0] == "Starting the run"
    assert lines[5] == "(RayTrainWorker pid=7377) half a line"
    assert [s for s, in StepMetric.objects.filter(job=job).values_list("step")] == [1, 2]
    assert job.events.filter(kind="checkpoint_saved").get().data["path"] == \
        checkpoints + "step-1"
    assert job.events.filter(kind="run_finished").count() == 1
    assert job.state == JobState.SUCCEEDED and job.last_step == 2 and job.last_loss == 2.5
    assert job.attempts.get().ended_at is not None
    # The text and its summary stay as they were.
    ray_job.refresh_from_db()
    assert ray_job.summary["finished"]["step"] == 2 and "half a line" in ray_job.logs


def test_output_longer_than_the_kept_tail_is_written_again_only_when_it_grows(
        member, queued, ray) -> None:
    """Ray gives the whole output at every poll and the row keeps its tail: an output past
    the tail that did not change since the last poll writes nothing, and only what followed
    the stored lines is stored when it grows."""
    _, ray_job = submitted(member)
    assert lifecycle.advance_ray_job(ray_job.pk)
    filler = "".join(f"warming up {n:06d}\n" for n in range(lifecycle.MAX_LOG_CHARS // 18 + 10))
    ray.output = filler + event(event="step", step=1, total_steps=9, loss=3.5) + "\n"
    assert len(ray.output) > lifecycle.MAX_LOG_CHARS
    assert lifecycle.advance_ray_job(ray_job.pk)
    ray_job.refresh_from_db()
    assert ray_job.summary["loss"] == [[1, 3.5]] and ray_job.logs == \
        ray.output[-lifecycle.MAX_LOG_CHARS:]
    stored = LogLine.objects.filter(job=ray_job.job).count()
    assert stored == ray_job.lines_stored == filler.count("\n") + 1
    with CaptureQueriesContext(connection) as unchanged:
        assert lifecycle.advance_ray_job(ray_job.pk)
    writes = [q["sql"] for q in unchanged.captured_queries
              if q["sql"].startswith(("UPDATE", "INSERT", "COPY"))]
    assert writes == [], writes
    ray.output += event(event="step", step=2, total_steps=9, loss=3.0) + "\n"
    assert lifecycle.advance_ray_job(ray_job.pk)
    ray_job.refresh_from_db()
    assert ray_job.summary["loss"] == [[1, 3.5], [2, 3.0]]
    assert LogLine.objects.filter(job=ray_job.job).count() == stored + 1
    assert list(StepMetric.objects.filter(job=ray_job.job).values_list("step", flat=True)) \
        == [1, 2]


def test_a_checkpoint_outside_the_jobs_folder_is_not_its_checkpoint(member, queued, ray
                                                                    ) -> None:
    _, ray_job = submitted(member)
    ray.output = event(event="checkpoint_saved", step=1, path="gs://other-team/x/step-1") + "\n"
    lifecycle.advance_ray_job(ray_job.pk)
    assert not ray_job.job.events.filter(kind="checkpoint_saved").exists()
    assert ray_job.job.events.filter(kind="suspicious_event").count() == 1


def test_a_stopped_ray_job_cancels_its_job(member, queued, ray) -> None:
    _, ray_job = submitted(member)
    lifecycle.request_stop(ray_job)  # before it was submitted
    job = Job.objects.get(pk=ray_job.job_id)
    assert job.state == JobState.CANCELLED and job.ended_at is not None


def test_the_ray_jobs_job_is_read_as_any_job_and_changed_only_as_a_ray_job(
        member, outsider, queued, ray) -> None:
    cluster, ray_job = submitted(member)
    ray.output = event(event="step", step=1, total_steps=2, loss=3.5) + "\nNCCL ready\n"
    lifecycle.advance_ray_job(ray_job.pk)
    job_id = ray_job.job_id
    client = api(member)
    assert client.get(f"/api/v1/clusters/ray-jobs/{ray_job.pk}/").json()["job"] == job_id
    detail = client.get(f"/api/v1/jobs/{job_id}/").json()
    assert detail["kind"] == "ray" and detail["origin"]["url"] == f"/clusters/{cluster.pk}/"
    assert [s["step"] for s in client.get(f"/api/v1/jobs/{job_id}/steps/").json()["results"]] \
        == [1]
    found = client.get(f"/api/v1/jobs/{job_id}/logs/", {"q": "nccl"}).json()
    assert [line["message"] for line in found["results"]] == ["NCCL ready"]
    assert api(outsider).get(f"/api/v1/jobs/{job_id}/").status_code == 404
    assert client.get("/api/v1/jobs/").json()["count"] == 0
    assert client.get("/api/v1/jobs/", {"kind": "ray"}).json()["count"] == 1
    assert client.post(f"/api/v1/jobs/{job_id}/cancel/").status_code == 400
    runs_lifecycle.reconcile(job_id)
    runs_lifecycle.submit(job_id)
    assert Job.objects.get(pk=job_id).state == JobState.RUNNING  # as Ray says, untouched
    page = Client()
    page.force_login(member)
    assert f'href="/jobs/{job_id}/"' in page.get(f"/clusters/{cluster.pk}/").content.decode()
    assert ray_job.submission_id in page.get(f"/jobs/{job_id}/").content.decode()



def test_a_ray_job_whose_actor_is_named_preemption_watcher_shows_no_preemption(
        member, queued, ray) -> None:
    """Issue 33: the Ray job's page reported a spot preemption because its output named an
    actor class PreemptionWatcher. Its lines, stored and read for restarts as any job's, make
    no notice, no restart and no word of a preemption on its page."""
    from controlplane.logs import restarts

    _, ray_job = submitted(member)
    lifecycle.advance_ray_job(ray_job.pk)
    ray.output = "\n".join([
        "(PreemptionWatcher pid=4242) started",
        "(PreemptionWatcher pid=4242) watching http://metadata/computeMetadata/v1/instance/"
        "preempted every 5 s",
        event(event="run_started", rank=0, world_size=1),
        event(event="step", step=1, total_steps=1, loss=3.5),
        event(event="run_finished", step=1, final_loss=3.5, wall_s=1.0), ""])
    lifecycle.advance_ray_job(ray_job.pk)
    ray.status = "SUCCEEDED"
    lifecycle.advance_ray_job(ray_job.pk)
    job = Job.objects.get(pk=ray_job.job_id)
    assert job.state == JobState.SUCCEEDED
    assert restarts.refresh(job.pk, force=True) == 0
    assert not job.events.filter(kind=restarts.NOTICE).exists()
    assert not job.restart_records.exists() and job.restarts == 0
    page = Client()
    page.force_login(member)
    text = page.get(f"/jobs/{job.pk}/").content.decode()
    # What the page writes for a preemption (its timeline's restart and the summary's words).
    for said in ("spot preemption", "kind-preempted", "kind-restart"):
        assert said not in text, said
