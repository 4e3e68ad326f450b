"""A model's runtime trial in the control plane: the CustomJob it sends (on the deployment's
machine, once), the figures it reads back when the job succeeds and the runtime it preselects
(the cheapest meeting the p99 target), a failed job's error, and the API and model page: team-
scoped, 400s naming the field and the limit, the table on the page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from controlplane.backends.storage import path_for_writer
from controlplane.serving import hardware, trials
from controlplane.serving.models import ModelEntry, RuntimeTrial
from vertexplan.runtime_choice import Traffic

TRAFFIC = Traffic(prompt_tokens=32, output_tokens=16, concurrency=4, requests=16,
                  p99_target_ms=100)
# What trainers/serving/runtime_trial.py writes (figures made up for the choice).
ROWS = [
    {"runtime": "eager", "tokens_per_s": 1000.0, "p50_ms": 20.0, "p99_ms": 80.0,
     "requests": 16, "errors": 0, "start_s": 2.0, "note": ""},
    {"runtime": "compiled", "tokens_per_s": 1500.0, "p50_ms": 15.0, "p99_ms": 300.0,
     "requests": 16, "errors": 0, "start_s": 90.0, "note": ""},
    {"runtime": "aot", "tokens_per_s": 1200.0, "p50_ms": 18.0, "p99_ms": 90.0,
     "requests": 16, "errors": 0, "start_s": 30.0, "note": ""},
    {"runtime": "triton", "tokens_per_s": 400.0, "p50_ms": 60.0, "p99_ms": 110.0,
     "requests": 16, "errors": 0, "start_s": 8.0, "note": ""},
    {"runtime": "vllm", "tokens_per_s": None, "p50_ms": None, "p99_ms": None,
     "requests": 0, "errors": 0, "start_s": None, "note": "needs a GPU"},
]


@pytest.fixture
def entry(team: Any, member: Any, tmp_path: Path, settings: Any) -> ModelEntry:
    # The buckets kept locally, as the emulator keeps them: the trial's figures land there.
    settings.CP_LOCAL_GCS_ROOT = str(tmp_path / "gcs")
    weights = tmp_path / "gcs" / "bucket" / "jobs" / "job-1" / "model"
    weights.mkdir(parents=True)
    return ModelEntry.objects.create(team=team, created_by=member, display_name="gpt",
                                     artifact_uri=str(weights), image_uri="img",
                                     state=ModelEntry.State.READY)


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _finish(backend: Any, trial: RuntimeTrial, rows: list[dict] | None) -> RuntimeTrial:
    """The job ends; its figures (when given) are where the job writes them."""
    trial.refresh_from_db()
    if rows is not None:
        folder = Path(path_for_writer(trials.results_folder(trial)))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / trials.RESULTS_FILE).write_text(json.dumps({"rows": rows}))
    backend.set_state(trial.job_name, "JOB_STATE_SUCCEEDED")
    trials.reconcile_all()
    trial.refresh_from_db()
    return trial


def test_a_trial_runs_one_job_on_the_deployment_machine_and_preselects_the_cheapest_meeting(
        backend: Any, entry: ModelEntry, member: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks() as queued:
        trial = trials.start(entry, member, traffic=TRAFFIC, machine_type="n1-standard-4")
    assert len(queued) == 1  # its job is created by a task, after the commit
    trials.submit(trial.pk)
    trials.submit(trial.pk)  # a retried task finds the job it made
    [spec] = backend.created
    [pool] = spec["jobSpec"]["workerPoolSpecs"]
    assert pool["machineSpec"] == {"machineType": "n1-standard-4"}
    assert pool["containerSpec"]["command"] == ["python", "-m", "trainers.serving.runtime_trial"]
    # Its figures go to its own output folder, under the team's output prefix.
    output = spec["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"]
    assert output == f"gs://cp-local-bucket/jobs/vision/runtime-trials/trial-{trial.pk}"
    assert pool["containerSpec"]["args"] == [
        entry.artifact_uri, f"{path_for_writer(output)}/figures.json",
        "--runtimes", "eager,compiled,aot,triton,vllm", "--prompt-tokens", "32",
        "--output-tokens", "16", "--concurrency", "4", "--requests", "16"]
    assert "cp-job" not in spec["labels"] and spec["labels"]["cp-trial"] == str(trial.pk)
    trial.refresh_from_db()
    assert trial.state == RuntimeTrial.State.RUNNING
    trials.reconcile_all()  # still running: nothing read
    assert RuntimeTrial.objects.get(pk=trial.pk).state == RuntimeTrial.State.RUNNING

    trial = _finish(backend, trial, ROWS)
    assert trial.state == RuntimeTrial.State.SUCCEEDED and trial.finished_at is not None
    # compiled is the fastest but misses the 100 ms p99; aot is the cheaper of those meeting it.
    assert trial.chosen_runtime == "aot"
    hourly = hardware.hourly("n1-standard-4", "", 0).micros
    assert trial.hourly_micros == hourly
    by_runtime = {row["runtime"]: row for row in trial.results}
    assert by_runtime["aot"]["cost_per_million_micros"] == round(hourly * 1e6 / (1200 * 3600))
    assert by_runtime["vllm"]["cost_per_million_micros"] is None
    assert [r["meets_target"] for r in trial.results] == [True, False, True, False, None]


def test_a_figures_file_is_read_as_figures_only(backend: Any, entry: ModelEntry,
                                                member: Any) -> None:
    """The figures file lies in the team's own output folder, which the team's code can write:
    only the runtimes asked for are kept (the first row of each, in the trial's order), and of
    each row only its figures, each of its own type."""
    trial = trials.start(entry, member, traffic=TRAFFIC, machine_type="n1-standard-4")
    trials.submit(trial.pk)
    hostile = [{"runtime": "mine", "tokens_per_s": 1e9, "p50_ms": 1.0, "p99_ms": 1.0},
               {**ROWS[1], "requests": "many", "note": "x" * 5000, "script": "<b>"},
               {**ROWS[0], "tokens_per_s": float("nan")},
               {**ROWS[1], "tokens_per_s": 1e9, "p99_ms": 1.0}]
    trial = _finish(backend, trial, hostile)
    assert trial.state == RuntimeTrial.State.SUCCEEDED
    assert [row["runtime"] for row in trial.results] == ["eager", "compiled"]
    eager, compiled = trial.results
    assert eager["tokens_per_s"] is None and eager["cost_per_million_micros"] is None
    assert compiled["requests"] == 0 and len(compiled["note"]) == 500
    assert "script" not in compiled and compiled["tokens_per_s"] == 1500.0
    assert trial.chosen_runtime == ""  # compiled's p99 of 300 ms misses the 100 ms target


def test_a_gpu_machine_is_asked_for_and_a_failed_or_empty_job_fails_the_trial(
        backend: Any, entry: ModelEntry, member: Any) -> None:
    trial = trials.start(entry, member, traffic=TRAFFIC, machine_type="n1-standard-8",
                         accelerator_type="NVIDIA_TESLA_T4", accelerator_count=1)
    trials.submit(trial.pk)
    [spec] = backend.created
    assert spec["jobSpec"]["workerPoolSpecs"][0]["machineSpec"] == {
        "machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4",
        "acceleratorCount": 1}
    trial = _finish(backend, trial, None)
    assert trial.state == RuntimeTrial.State.FAILED
    assert "left no figures" in trial.error_message

    failed = trials.start(entry, member, traffic=TRAFFIC, machine_type="n1-standard-4")
    trials.submit(failed.pk)
    failed.refresh_from_db()
    backend.set_state(failed.job_name, "JOB_STATE_FAILED", error_message="out of memory")
    trials.reconcile_all()
    failed.refresh_from_db()
    assert failed.state == RuntimeTrial.State.FAILED and "out of memory" in failed.error_message


def test_the_api_starts_and_lists_trials_for_the_models_team_only(
        backend: Any, entry: ModelEntry, member: Any, viewer: Any, outsider: Any) -> None:
    url = f"/api/v1/serving/models/{entry.pk}/trials/"
    body = {"machine_type": "n1-standard-4", "prompt_tokens": 32, "output_tokens": 16,
            "concurrency": 4, "requests": 16, "p99_target_ms": 100}
    response = api(member).post(url, body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["state"] == "PENDING"
    trial = RuntimeTrial.objects.get(pk=response.json()["id"])
    trials.submit(trial.pk)
    _finish(backend, trial, ROWS)
    [shown] = api(viewer).get(url).json()
    assert shown["chosen_runtime"] == "aot" and len(shown["results"]) == 5
    assert shown["results"][0]["runtime"] == "eager" and shown["results"][0]["p99_ms"] == 80.0
    assert api(viewer).post(url, body, format="json").status_code == 403
    assert api(outsider).get(url).status_code == 404
    assert api(outsider).post(url, body, format="json").status_code == 404


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"output_tokens": 65}, "output_tokens", "less than or equal to 64"),
    ({"concurrency": 0}, "concurrency", "greater than or equal to 1"),
    ({"concurrency": 8, "requests": 4}, "requests", "at least concurrency (8)"),
    ({"machine_type": "n9-huge"}, "machine_type", "unknown machine type"),
    ({"machine_type": "ct5lp-hightpu-4t"}, "machine_type", "TPU machine"),
    ({"accelerator_type": "NVIDIA_L4", "accelerator_count": 1}, "accelerator_type",
     "takes no NVIDIA_L4"),
    ({"p99_target": 5}, "p99_target", "Unknown field"),
])
def test_bad_input_is_a_400_naming_the_field_and_the_limit_and_starts_nothing(
        backend: Any, entry: ModelEntry, member: Any, changes: dict, field: str,
        words: str) -> None:
    body = {"machine_type": "n1-standard-4", "p99_target_ms": 100, **changes}
    response = api(member).post(f"/api/v1/serving/models/{entry.pk}/trials/", body,
                                format="json")
    assert response.status_code == 400, response.content
    assert words.lower() in " ".join(response.json()[field]).lower()
    assert not RuntimeTrial.objects.exists()


def test_a_hugging_face_model_is_refused_naming_the_model(
        backend: Any, entry: ModelEntry, member: Any) -> None:
    ModelEntry.objects.filter(pk=entry.pk).update(format=ModelEntry.Format.HF)
    response = api(member).post(f"/api/v1/serving/models/{entry.pk}/trials/",
                                {"machine_type": "n1-standard-4"}, format="json")
    assert response.status_code == 400 and "format product" in response.json()["model"][0]


def test_the_model_page_shows_the_table_and_the_chosen_runtime(
        backend: Any, entry: ModelEntry, member: Any) -> None:
    client = Client()
    client.force_login(member)
    assert "No runtime trial yet" in client.get(f"/serving/models/{entry.pk}/").text
    response = client.post(f"/serving/models/{entry.pk}/trial/", {
        "machine_type": "n1-standard-4", "accelerator_count": 0, "prompt_tokens": 32,
        "output_tokens": 16, "concurrency": 4, "requests": 16, "p99_target_ms": 100})
    assert response.status_code == 302
    trial = RuntimeTrial.objects.get()
    trials.submit(trial.pk)
    _finish(backend, trial, ROWS)
    page = client.get(f"/serving/models/{entry.pk}/").text
    assert '<tr data-runtime="aot" class="chosen">' in page
    assert "Preselected: <strong>aot</strong>" in page
    assert "needs a GPU" in page and "300.0 ms" in page
    cost = trial.results[2]["cost_per_million_micros"]
    assert f"${cost / 1e6:.4f}".rstrip("0") in page


def test_the_chosen_runtime_is_preselected_to_register_the_weights_with(
        fake: Any, queued: list, trained_job: Any, member: Any) -> None:
    from controlplane.serving import registry

    eager = registry.register(job=trained_job, user=member, step=60)
    RuntimeTrial.objects.create(
        model_entry=eager, created_by=member, machine_type="n1-standard-4", prompt_tokens=32,
        output_tokens=16, concurrency=4, requests=16, p99_target_ms=100, results=ROWS,
        state=RuntimeTrial.State.SUCCEEDED, chosen_runtime="aot", choice_reason="aot: cheapest")
    client = Client()
    client.force_login(member)
    page = client.get(f"/serving/models/{eager.pk}/").text
    assert 'id="register-chosen"' in page and '<option value="aot" selected>' in page
    response = client.post("/serving/models/new/", {
        "job": trained_job.pk, "step": 60, "format": "product", "runtime": "aot",
        "next": f"/serving/models/{eager.pk}/"})
    assert response.status_code == 302 and response.url == f"/serving/models/{eager.pk}/"
    aot = ModelEntry.objects.get(runtime="aot")
    assert aot.artifact_uri == eager.artifact_uri  # the same weights, served as measured
