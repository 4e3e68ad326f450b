"""A team's own framework's lines become steps, evaluations and checkpoints as the store takes
them in (controlplane/logs/framework_lines.py, issue 36): counted once each, whatever the
follower re-reads, in the order they were printed, across pages; the product's own trainer's
text and the other replicas' copies never become steps."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from controlplane.logs.models import FrameworkTrack, StepMetric
from controlplane.logs.store import Target, store_entries
from controlplane.runs.models import Job, JobEvent
from tests.logs.conftest import followed_job
from tests.runs.pages.conftest import CPU_CUSTOM_JOB
from vertexplan.logparse.entries import LogEntry

T0 = datetime(2026, 5, 1, tzinfo=UTC)
PREFIX = "gs://acme/vision/exp"
# What transformers' Trainer prints with logging_steps=10, save_steps=20, log_level="info".
HF_RUN = [
    "***** Running training *****",
    "  Num examples = 640",
    "{'loss': 2.3101, 'grad_norm': 1.873, 'learning_rate': 4.5e-05, 'epoch': 0.25}",
    "{'loss': 2.1, 'grad_norm': 1.5, 'learning_rate': 4e-05, 'epoch': 0.5}",
    "Saving model checkpoint to /gcs/acme/vision/exp/checkpoint-20",
    "{'loss': 1.9, 'grad_norm': 1.2, 'learning_rate': 3.5e-05, 'epoch': 0.75}",
    "{'eval_loss': 1.8, 'eval_runtime': 0.5, 'epoch': 0.75}",
    "{'loss': 1.7, 'grad_norm': 1.1, 'learning_rate': 3e-05, 'epoch': 1.0}",
    "Saving model checkpoint to /gcs/acme/vision/exp/checkpoint-40",
    "{'train_runtime': 12.5, 'train_samples_per_second': 80.0, "
    "'train_steps_per_second': 2.4, 'train_loss': 2.0, 'epoch': 1.0}",
]


def custom_job(command: list[str]) -> dict[str, Any]:
    spec = copy.deepcopy(CPU_CUSTOM_JOB)
    spec["jobSpec"]["baseOutputDirectory"] = {"outputUriPrefix": PREFIX}
    spec["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["command"] = command
    spec["jobSpec"]["workerPoolSpecs"][0]["replicaCount"] = "2"
    return spec


def entries(lines: list[str], first: int = 0, task: str = "workerpool0-0") -> list[LogEntry]:
    return [LogEntry(insert_id=f"{task}-{first + i}", text_payload=text, severity=200,
                     timestamp=T0 + timedelta(seconds=first + i), job_id="42",
                     task_name=task, json_payload=None, log_name=f"projects/p/logs/{task}")
            for i, text in enumerate(lines)]


def store(job: Job, page: list[LogEntry]) -> None:
    store_entries(page, {"42": Target(job.pk, 1)})


def steps(job: Job) -> list[tuple[int, float | None]]:
    return list(StepMetric.objects.filter(job=job).order_by("step").values_list("step", "loss"))


def kinds(job: Job) -> list[tuple[str, int | None]]:
    return list(JobEvent.objects.filter(job=job).order_by("timestamp")
                .values_list("kind", "step"))


@pytest.mark.parametrize("command", [
    ["accelerate", "launch", "train.py"],  # told by the command
    ["python", "train.py"],                # told by the first lines
])
def test_pages_read_again_and_out_of_step_count_each_line_once(db: None, command: list[str]
                                                                ) -> None:
    job = followed_job(custom_job(command))
    page = entries(HF_RUN)
    # The head pass reads the first half, then a settle pass the whole run, then the head
    # again from a little before where it stopped: every line offered two or three times.
    store(job, page[:5])
    store(job, page)
    store(job, page[3:])
    # checkpoint-20 after two loss lines: every 10 steps (20/3 < i <= 10) -- the largest, 10.
    assert steps(job) == [(10, 2.3101), (20, 2.1), (30, 1.9), (40, 1.7)]
    assert kinds(job) == [("checkpoint_saved", 20), ("eval", 30), ("checkpoint_saved", 40),
                          ("run_finished", 40)]
    saved = JobEvent.objects.get(job=job, kind="checkpoint_saved", step=40)
    assert saved.data["path"] == "/gcs/acme/vision/exp/checkpoint-40"
    assert saved.data["recognizer"].startswith("hf_trainer@")
    track = FrameworkTrack.objects.get(job=job, replica="workerpool0-0")
    assert track.framework in ("accelerate", "hf_trainer")
    job.refresh_from_db()
    assert job.last_step == 40


def test_the_other_replicas_copies_are_no_steps(db: None) -> None:
    job = followed_job(custom_job(["accelerate", "launch", "train.py"]))
    store(job, entries(HF_RUN, task="workerpool1-0") + entries(HF_RUN[:4], first=100))
    assert steps(job) == [(1, 2.3101), (2, 2.1)]  # the chief's two lines; no checkpoint yet


def test_an_unknown_jobs_framework_is_told_by_its_chief_alone(db: None) -> None:
    # Until the chief's first lines tell the framework no other replica's line is read, so
    # none is kept: the other replica gets no track to lock and write on every page.
    job = followed_job(custom_job(["python", "train.py"]))
    store(job, entries(HF_RUN, task="workerpool0-1") + entries(HF_RUN[:4], first=100))
    assert steps(job) == [(1, 2.3101), (2, 2.1)]
    assert list(FrameworkTrack.objects.filter(job=job).values_list("replica", "framework")) == [
        ("workerpool0-0", "hf_trainer")]


def test_a_checkpoint_outside_the_jobs_prefix_is_suspicious_not_a_checkpoint(db: None) -> None:
    job = followed_job(custom_job(["accelerate", "launch", "train.py"]))
    store(job, entries(["Saving model checkpoint to /gcs/other-team/secret/checkpoint-20"]))
    assert kinds(job) == [("suspicious_event", 20)]


def test_the_builtin_trainers_text_stays_lines(db: None) -> None:
    builtin = followed_job(custom_job(["python", "-m", "trainers.train"]))
    store(builtin, entries(HF_RUN))
    assert steps(builtin) == [] and kinds(builtin) == []
    assert not FrameworkTrack.objects.filter(job=builtin).exists()


def test_an_unknown_job_is_read_only_from_its_first_lines(db: None) -> None:
    from controlplane.logs.framework_lines import DETECT_LINES
    job = followed_job(custom_job(["python", "train.py"]))
    store(job, entries([f"epoch {i} done" for i in range(DETECT_LINES)]))
    store(job, entries(HF_RUN, first=DETECT_LINES))
    assert steps(job) == [] and kinds(job) == []
    track = FrameworkTrack.objects.get(job=job)
    assert (track.framework, track.lines_read) == ("", DETECT_LINES)


def test_the_job_page_names_the_framework_and_how_it_was_told(db: None, client: Any) -> None:
    from django.urls import reverse
    told_by_command = followed_job(custom_job(["accelerate", "launch", "train.py"]))
    client.force_login(told_by_command.created_by)
    html = client.get(reverse("job-detail", args=[told_by_command.pk])).content.decode()
    assert 'data-framework="accelerate"' in html and "told by the job&#x27;s command" in html
    Job.objects.filter(pk=told_by_command.pk).update(
        custom_job=custom_job(["python", "train.py"]))
    html = client.get(reverse("job-detail", args=[told_by_command.pk])).content.decode()
    assert "data-framework" not in html  # nothing told yet
    store(told_by_command, entries(HF_RUN[:3]))
    html = client.get(reverse("job-detail", args=[told_by_command.pk])).content.decode()
    assert 'data-framework="hf_trainer"' in html and "first lines" in html


def test_each_redraw_of_an_epochs_bar_is_read(db: None) -> None:
    """tqdm redraws its bar after a carriage return and ends it with a newline: a whole
    epoch of Lightning's redraws is one entry, as lightning 2.6 printed it here."""
    job = followed_job(custom_job(["python", "fit.py"]))
    bar = "Epoch 0: {p:>3}%|{b:<10}| {n}/4 [00:00<00:00, 300.00it/s{post}]"
    redraws = ["Epoch 0:   0%|          | 0/4 [00:00<?, ?it/s]"]
    for n, (before, after) in enumerate([(None, 7.17), (7.17, 4.32), (4.32, 5.1),
                                         (5.1, 5.02)], start=1):
        for loss in (before, after):
            post = "" if loss is None else f", train_loss={loss:.3f}"
            redraws.append(bar.format(p=25 * n, b="█" * (n * 10 // 4), n=n, post=post))
    store(job, entries(["GPU available: False, used: False", "\r" + "\r".join(redraws)]))
    assert steps(job) == [(1, 7.17), (2, 4.32), (3, 5.1), (4, 5.02)]


def test_the_requests_framework_field_names_what_detection_would_tell(db: None) -> None:
    from controlplane.logs.framework_lines import report
    job = followed_job(custom_job(["python", "train.py"]))
    Job.objects.filter(pk=job.pk).update(request={**job.request, "framework": "torchtitan"})
    job.refresh_from_db()
    titan = "[rank0]:[titan] 2025-06-01 10:00:00,123 - root - INFO - "
    store(job, entries([titan + "step:  10  loss:  7.5000  grad_norm:  1.2000  memory: 10.00GiB"
                        "(10.00%)  tps: 1,234  tflops: 12.34  mfu: 5.00%"]))
    assert steps(job) == [(10, 7.5)]
    assert report(job) == {"name": "torchtitan", "label": "torchtitan",
                           "how": "named by the job's request"}


def test_an_unknown_framework_is_refused_naming_the_field() -> None:
    from vertexplan.composer import compose
    from vertexplan.composer.request import JobRequest
    composed = compose(JobRequest.from_dict({
        "name": "x", "command": ["python", "t.py"], "framework": "keras",
        "chief": {"machine_type": "n1-standard-4"}}))
    assert "hf_trainer" in " ".join(composed.errors["framework"])
    ok = compose(JobRequest.from_dict({
        "name": "x", "command": ["python", "t.py"], "framework": "lightning",
        "chief": {"machine_type": "n1-standard-4"}}))
    assert "framework" not in ok.errors


def test_an_accelerate_loops_bar_and_the_line_its_logger_wrote_into_it(db: None) -> None:
    """An Accelerate loop (accelerate 1.15, tqdm 4.70, as tests/integration/own_frameworks/
    accelerate_script.py prints): its bar has no newline until it closes, so the evaluation its
    logger writes lands in the bar's line and ends that entry; both are read, each its own row,
    and the bar's next entry goes on from there."""
    job = followed_job(custom_job(["accelerate", "launch", "train.py"]))
    bar = "{p:>3}%|{b:<10}| {n}/4 [00:00<00:00, 150.00it/s{post}]"
    redraws = [bar.format(p=0, b="", n=0, post="").replace("150.00it/s", "?it/s")]
    for n, loss in enumerate([13.0, 8.69, 11.8, 10.3], start=1):
        redraws.append(bar.format(p=25 * n, b="█" * (n * 10 // 4), n=n, post=""))
        redraws.append(bar.format(p=25 * n, b="█" * (n * 10 // 4), n=n, post=f", loss={loss}"))
    log = "11/29/2026 23:22:33 - INFO - "
    first = "\r" + "\r".join(redraws[:5]) + " " + log + "__main__ - [RANK 0] epoch 0: " \
        "perplexity: 107.6447 eval_loss: 4.6788"
    store(job, entries([first, log + "accelerate.accelerator - [RANK 0] Saving current state "
                               "to /gcs/acme/vision/exp/step_2",
                        # The bar's close redraws its last state.
                        "\r" + "\r".join([*redraws[5:], redraws[-1]])]))
    assert steps(job) == [(1, 13.0), (2, 8.69), (3, 11.8), (4, 10.3)]
    assert [k for k in kinds(job) if k[0] != "step"] == [
        ("eval", 2), ("checkpoint_saved", 2), ("run_finished", 4)]


def test_a_loop_started_by_torchrun_is_told_by_its_first_lines(db: None) -> None:
    """torchrun is a launcher: the Accelerate loop it starts says what it is in its first line
    (its accelerator's state), and its bar is then read as that loop's, in later pages too."""
    from controlplane.logs.framework_lines import report
    bar = "{p:>3}%|{b:<10}| {n}/4 [00:00<00:00, 150.00it/s, loss={loss}]"
    redraws = [bar.format(p=25 * n, b="█" * (n * 10 // 4), n=n, loss=loss)
               for n, loss in enumerate([13.0, 8.69, 11.8, 10.3], start=1)]
    job = followed_job(custom_job(["torchrun", "--nproc_per_node", "2", "train.py"]))
    state = ("11/29/2026 23:22:30 - INFO - __main__ - Distributed environment: MULTI_CPU  "
             "Backend: gloo")
    store(job, entries([state, "\r" + "\r".join(redraws[:2])]))
    store(job, entries(["\r" + "\r".join(redraws[2:])], first=2))
    assert steps(job) == [(1, 13.0), (2, 8.69), (3, 11.8), (4, 10.3)]
    assert report(job) == {"name": "accelerate", "label": "Accelerate",
                           "how": "told by the job's first lines (started by torchrun)"}


def test_a_bar_in_a_torchrun_job_whose_lines_tell_nothing_stays_a_line(db: None) -> None:
    from controlplane.logs.framework_lines import report
    bar = "{p:>3}%|{b:<10}| {n}/4 [00:00<00:00, 150.00it/s, loss={loss}]"
    redraws = [bar.format(p=25 * n, b="█" * (n * 10 // 4), n=n, loss=loss)
               for n, loss in enumerate([13.0, 8.69, 11.8, 10.3], start=1)]
    plain = followed_job(custom_job(["torchrun", "train.py"]))
    store(plain, entries(["starting", "\r" + "\r".join(redraws)]))
    assert steps(plain) == []
    assert report(plain) == {"name": "torchrun", "label": "torchrun",
                             "how": "told by the job's command"}
