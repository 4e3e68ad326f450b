"""The job page leaves out the MFU chart of a job that has no MFU (a CPU job), and its timeline
folds checkpoint rotation away (?timeline=all shows it) so a preemption stands out."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from controlplane.logs.models import StepMetric
from controlplane.runs.models import Job, JobEvent, JobRestart, JobState, RestartCause
from controlplane.teams.models import Team

# One a2-highgpu-1g: an A100, so a run that reports its model's shape has an MFU.
A100_JOB = {"jobSpec": {"workerPoolSpecs": [{
    "machineSpec": {"machineType": "a2-highgpu-1g", "acceleratorType": "NVIDIA_TESLA_A100",
                    "acceleratorCount": 1},
    "replicaCount": "1"}]}}
# What the trainer's run_started says of the model: the MFU's FLOPs per token.
SHAPE = {"rank": 0, "world_size": 1, "strategy": "ddp", "params": 10_745_088, "n_layer": 6,
         "n_head": 6, "d_model": 384, "seq_len": 256, "precision": "bf16",
         "resumed_from_step": None}


def trained(job: Job, custom_job: dict[str, Any] | None = None) -> Job:
    """A run_started with the model's shape and three steps with a throughput (on the job's
    CPU machine, or custom_job's accelerators)."""
    if custom_job is not None:
        job.custom_job = custom_job
        job.save(update_fields=["custom_job"])
    t0 = timezone.now() - timedelta(minutes=5)
    JobEvent.objects.create(job=job, kind="run_started", timestamp=t0, replica="workerpool0-0",
                            data=SHAPE)
    StepMetric.objects.bulk_create([
        StepMetric(job=job, step=n, timestamp=t0 + timedelta(seconds=n), loss=1.0 / n,
                   tokens_per_s=1e6, step_time_s=0.1, insert_id=f"s{n}") for n in (1, 2, 3)])
    return job


def page(client: Client, job: Job, **params: str) -> str:
    response = client.get(reverse("job-detail", args=[job.pk]), params)
    assert response.status_code == 200
    return response.content.decode()


# --- MFU -----------------------------------------------------------------------------------------

def test_a_finished_cpu_job_has_no_mfu_chart(member_client: Client, member: Any, team: Team,
                                             make_job: Callable[..., Job]) -> None:
    job = trained(make_job(team, member, state=JobState.SUCCEEDED))
    html = page(member_client, job)
    assert 'id="mfu-chart"' not in html and "MFU (model FLOPs utilisation)" not in html
    assert 'id="metrics-chart"' in html  # the other charts stay


def test_a_running_cpu_job_keeps_the_mfu_chart_hidden(member_client: Client, member: Any,
                                                      team: Team,
                                                      make_job: Callable[..., Job]) -> None:
    job = trained(make_job(team, member, state=JobState.RUNNING))
    html = page(member_client, job)
    assert '<div id="mfu-panel" hidden>' in html


def test_a_job_with_mfu_has_the_chart(member_client: Client, member: Any, team: Team,
                                      make_job: Callable[..., Job]) -> None:
    for state in (JobState.SUCCEEDED, JobState.RUNNING):
        job = trained(make_job(team, member, state=state), A100_JOB)
        html = page(member_client, job)
        assert '<div id="mfu-panel">' in html and 'id="mfu-chart"' in html


def test_an_accelerator_job_without_throughput_has_no_mfu_chart(
        member_client: Client, member: Any, team: Team,
        make_job: Callable[..., Job]) -> None:
    job = trained(make_job(team, member, state=JobState.FAILED), A100_JOB)
    StepMetric.objects.filter(job=job).update(tokens_per_s=None)
    assert 'id="mfu-chart"' not in page(member_client, job)


# --- The timeline's checkpoint rotation -----------------------------------------------------------

def rotating(job: Job, saves: int) -> dict[str, Any]:
    """A run that saves a checkpoint every 10 steps and deletes the one before, preempted at
    step 25 and resumed from step 20's checkpoint; the rest of the rotation after it."""
    t0 = timezone.now() - timedelta(hours=1)
    events = [JobEvent(job=job, kind="state", timestamp=t0,
                       data={"from": "QUEUED", "to": "RUNNING", "source": "reconcile"})]
    for n in range(1, saves + 1):
        step = 10 * n
        at = t0 + timedelta(seconds=step if step <= 20 else step + 100)
        events.append(JobEvent(job=job, kind="checkpoint_saved", timestamp=at, step=step,
                               data={"step": step, "path": f"gs://b/job/ckpt-{step}"}))
        if n > 1:
            events.append(JobEvent(job=job, kind="checkpoint_deleted", timestamp=at, step=step,
                                   data={"step": step - 10,
                                         "path": f"gs://b/job/ckpt-{step - 10}"}))
    events.append(JobEvent(job=job, kind="preempted", timestamp=t0 + timedelta(seconds=25),
                           step=25, data={"signal": "SIGTERM", "step": 25}))
    JobEvent.objects.bulk_create(events)
    resumed_from = JobEvent.objects.get(job=job, kind="checkpoint_saved", step=20)
    JobRestart.objects.create(job=job, attempt=1, ordinal=1, cause=RestartCause.PREEMPTION,
                              occurred_at=t0 + timedelta(seconds=26), step=25,
                              resumed_at=t0 + timedelta(seconds=40), resumed_from_step=20,
                              checkpoint=resumed_from,
                              steps_lost=5)
    return {"resumed_from": resumed_from}


def test_checkpoint_rotation_is_folded_so_the_preemption_stands_out(
        member_client: Client, member: Any, team: Team,
        make_job: Callable[..., Job]) -> None:
    job = make_job(team, member, state=JobState.RUNNING)
    made = rotating(job, saves=10)
    html = page(member_client, job)
    assert "preempted" in html and "spot preemption" in html
    # Rotation is left out, but for the checkpoint the restart resumed from (it links there).
    assert "gs://b/job/ckpt-50" not in html and "checkpoint deleted" not in html
    assert f'id="event-{made["resumed_from"].pk}"' in html and "gs://b/job/ckpt-20" in html
    assert "18 checkpoint events hidden." in html  # 10 saved, 9 deleted, one kept
    assert 'href="?timeline=all#job-timeline">Show checkpoints</a>' in html
    # The poll keeps the folded view.
    timeline_url = reverse("job-partial", args=[job.pk, "timeline"])
    assert f'hx-get="{timeline_url}"' in html


def test_timeline_all_shows_the_rotation_and_keeps_it_while_polling(
        member_client: Client, member: Any, team: Team,
        make_job: Callable[..., Job]) -> None:
    job = make_job(team, member, state=JobState.RUNNING)
    rotating(job, saves=10)
    html = page(member_client, job, timeline="all")
    assert "gs://b/job/ckpt-50" in html and "checkpoint deleted" in html
    assert "Showing all 19 checkpoint events." in html
    assert 'href="?#job-timeline">Hide checkpoints</a>' in html
    timeline_url = reverse("job-partial", args=[job.pk, "timeline"])
    assert f'hx-get="{timeline_url}?timeline=all"' in html
    part = member_client.get(timeline_url, {"timeline": "all"}).content.decode()
    assert "gs://b/job/ckpt-50" in part and f'hx-get="{timeline_url}?timeline=all"' in part
    folded = member_client.get(timeline_url).content.decode()
    assert "gs://b/job/ckpt-50" not in folded and "Show checkpoints" in folded


def test_the_toggle_keeps_the_pages_other_parameters(member_client: Client, member: Any,
                                                     team: Team,
                                                     make_job: Callable[..., Job]) -> None:
    job = make_job(team, member, state=JobState.SUCCEEDED)
    rotating(job, saves=5)
    html = page(member_client, job, severity="ERROR")
    assert 'href="?severity=ERROR&amp;timeline=all#job-timeline"' in html


def test_a_rotation_past_the_timelines_limit_no_longer_buries_the_preemption(
        member_client: Client, member: Any, team: Team,
        make_job: Callable[..., Job]) -> None:
    job = make_job(team, member, state=JobState.SUCCEEDED)
    rotating(job, saves=200)  # 399 checkpoint events, more than the timeline's 300
    html = page(member_client, job)
    assert "SIGTERM" in html and "spot preemption" in html


def test_a_few_checkpoints_stay_on_the_timeline(member_client: Client, member: Any,
                                                team: Team,
                                                make_job: Callable[..., Job]) -> None:
    job = make_job(team, member, state=JobState.RUNNING)
    rotating(job, saves=2)  # two saved, one deleted
    html = page(member_client, job)
    assert "gs://b/job/ckpt-10" in html and "checkpoint deleted" in html
    assert "Show checkpoints" not in html and "Hide checkpoints" not in html
