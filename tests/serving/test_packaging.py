"""A triton model's packaging job: the CustomJob registration submits (once), the entry's
PACKAGING state until it ends, the upload it queues or the error it shows, and the paths it
may write to."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone

from controlplane.backends.images_base import get_image_registry
from controlplane.runs.models import Job
from controlplane.serving import lifecycle, packaging, registry
from controlplane.serving.models import ModelEntry
from tests.serving.fakes import FakeServing

COPY = "us-docker.pkg.dev/acme/serving/tritonserver:24.10-py3"
S = ModelEntry.State


@pytest.fixture
def triton_entry(fake: FakeServing, backend: Any, queued: list, trained_job: Job,
                 member: Any, django_capture_on_commit_callbacks: Any) -> ModelEntry:
    get_image_registry().push(COPY)
    with django_capture_on_commit_callbacks(execute=True):
        entry = registry.register(job=trained_job, user=member, step=60, runtime="triton",
                                  image_uri=COPY)
    assert queued == [("package_model", (str(entry.pk),))]
    return entry


def test_registration_submits_one_packaging_job_that_builds_the_repository_in_place(
        triton_entry: ModelEntry, backend: Any, trained_job: Job) -> None:
    assert triton_entry.state == S.PACKAGING
    packaging.submit(triton_entry.pk)
    packaging.submit(triton_entry.pk)  # a retried task finds the job it made
    [spec] = backend.created
    weights = f"{trained_job.output_uri}/checkpoints/step-00000060"
    [pool] = spec["jobSpec"]["workerPoolSpecs"]
    assert pool["containerSpec"]["command"] == ["python", "-m", "trainers.serving.triton_package"]
    assert pool["containerSpec"]["args"] == [weights, f"{weights}/triton", "--check"]
    assert "cp-job" not in spec["labels"]  # not an attempt of the training job
    entry = ModelEntry.objects.get(pk=triton_entry.pk)
    assert entry.packaging_job == next(iter(backend.jobs))
    # A task lost before the job was created: the sweep finds the job it made.
    ModelEntry.objects.filter(pk=entry.pk).update(packaging_job="")
    packaging.submit(entry.pk)
    assert len(backend.created) == 1


def test_an_aot_model_is_packaged_in_the_serving_image_before_it_is_uploaded(
        fake: FakeServing, backend: Any, queued: list, trained_job: Job, member: Any,
        django_capture_on_commit_callbacks: Any, settings: Any) -> None:
    # The package holds code for one torch: it is built by the image the replicas run.
    settings.CP_SERVING_IMAGE = "us-docker.pkg.dev/acme/serving/trainers:7"
    with django_capture_on_commit_callbacks(execute=True):
        entry = registry.register(job=trained_job, user=member, step=60, runtime="aot")
    assert (entry.state, queued) == (S.PACKAGING, [("package_model", (str(entry.pk),))])
    packaging.submit(entry.pk)
    [spec] = backend.created
    [pool] = spec["jobSpec"]["workerPoolSpecs"]
    weights = f"{trained_job.output_uri}/checkpoints/step-00000060"
    assert entry.artifact_uri == weights  # the package goes beside the weights, in aoti/
    assert pool["containerSpec"] == {
        "imageUri": "us-docker.pkg.dev/acme/serving/trainers:7",
        "command": ["python", "-m", "trainers.serving.aot_package"],
        "args": [weights, "--device", "cpu"]}
    assert pool["machineSpec"] == {"machineType": packaging.MACHINE_TYPE}
    assert not fake.models  # uploaded only once the job has succeeded


def test_the_paths_are_those_the_emulator_writes_when_it_keeps_the_buckets(
        triton_entry: ModelEntry, backend: Any, settings: Any, tmp_path: Any) -> None:
    settings.CP_LOCAL_GCS_ROOT = str(tmp_path)
    spec = packaging.custom_job(triton_entry)
    weights, repository, _ = spec["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]["args"]
    assert weights.startswith(str(tmp_path)) and repository == f"{weights}/triton"


def test_the_upload_waits_for_the_packaging_job_and_follows_its_success(
        triton_entry: ModelEntry, backend: Any, fake: FakeServing, queued: list,
        django_capture_on_commit_callbacks: Any) -> None:
    packaging.submit(triton_entry.pk)
    name = ModelEntry.objects.get(pk=triton_entry.pk).packaging_job
    backend.set_state(name, "JOB_STATE_RUNNING")
    lifecycle.reconcile_all()
    registry.upload(triton_entry.pk)
    assert ModelEntry.objects.get(pk=triton_entry.pk).state == S.PACKAGING
    assert fake.models == {}
    backend.set_state(name, "JOB_STATE_SUCCEEDED")
    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.reconcile_all()
        lifecycle.reconcile_all()  # twice: one upload queued
    assert ModelEntry.objects.get(pk=triton_entry.pk).state == S.UPLOADING
    assert [q for q in queued if q[0] == "upload_model"] == [("upload_model",
                                                               (str(triton_entry.pk),))]


def test_a_failed_packaging_job_fails_the_entry_with_its_error(
        triton_entry: ModelEntry, backend: Any, fake: FakeServing) -> None:
    packaging.submit(triton_entry.pk)
    name = ModelEntry.objects.get(pk=triton_entry.pk).packaging_job
    backend.set_state(name, "JOB_STATE_FAILED", error_code=3,
                      error_message="The replica workerpool0-0 exited with a non-zero status of 2.")
    lifecycle.reconcile_all()
    entry = ModelEntry.objects.get(pk=triton_entry.pk)
    assert entry.state == S.FAILED
    assert entry.error_message.startswith(f"packaging job {name.rsplit('/', 1)[-1]} failed: ")
    assert "non-zero status of 2" in entry.error_message
    registry.upload(entry.pk)
    assert fake.models == {}


def test_the_tools_own_error_line_is_the_entrys_not_the_platforms_closing_line(
        triton_entry: ModelEntry, backend: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 33: a failed build said 'exited ... after 5 restarts' and no pointer to why. The
    platform's lines at ERROR come after the tool's structured refusal (newest first here, as
    asked); the refusal is the entry's error. And the job is not retried: a build fails the
    same way each time."""
    from datetime import timedelta

    from controlplane.backends.base import LogPage
    from vertexplan.logparse.entries import LogEntry

    packaging.submit(triton_entry.pk)
    [spec] = backend.created
    assert spec["jobSpec"]["scheduling"] == {"disableRetries": True}
    name = ModelEntry.objects.get(pk=triton_entry.pk).packaging_job
    now = timezone.now()

    def entry(age_s: int, **payload: Any) -> LogEntry:
        return LogEntry(insert_id=str(age_s), timestamp=now - timedelta(seconds=age_s),
                        severity=500, job_id="1", task_name="workerpool0-0", **payload)

    asked: list[str] = []

    def logs(filter_: str, **kwargs: Any) -> LogPage:
        asked.append(filter_)
        return LogPage([
            entry(0, text_payload="Job failed. The replica workerpool0-0 exited with a "
                                  "non-zero status of 2 after 5 restarts."),
            entry(1, text_payload="The replica workerpool0-0 exited with a non-zero status "
                                  "of 2 after 5 restarts."),
            entry(2, json_payload={"message": "triton repository: the model folder has no "
                                              "config.json", "severity": "ERROR"})], "")

    monkeypatch.setattr(backend, "list_log_entries", logs, raising=False)
    backend.set_state(name, "JOB_STATE_FAILED", error_code=3,
                      error_message="The replica workerpool0-0 exited with a non-zero status "
                                    "of 2 after 5 restarts.")
    lifecycle.reconcile_all()
    entry_now = ModelEntry.objects.get(pk=triton_entry.pk)
    assert asked and "severity>=ERROR" in asked[0]
    assert entry_now.error_message.endswith("failed: triton repository: the model folder has "
                                            "no config.json"), entry_now.error_message


def test_a_refused_packaging_job_fails_the_entry(triton_entry: ModelEntry, backend: Any) -> None:
    from controlplane.backends import errors

    backend.fail_creates.append(errors.InvalidJobSpec("image not found"))
    packaging.submit(triton_entry.pk)
    entry = ModelEntry.objects.get(pk=triton_entry.pk)
    assert (entry.state, entry.error_message) == (S.FAILED,
                                                  "packaging job refused: image not found")


@pytest.mark.parametrize("path", [
    "gs://another-teams-bucket/jobs/speech/job-9/checkpoints/step-00000090",
    "gs://cp-local-bucket/jobs/vision/job-{pk}/../../speech/job-9/checkpoints/step-00000090",
])
@pytest.mark.parametrize("runtime", ["triton", "eager", "aot"])
def test_a_checkpoint_outside_the_jobs_output_folder_is_never_served_nor_packaged(
        fake: FakeServing, backend: Any, trained_job: Job, member: Any, path: str,
        runtime: str) -> None:
    # A trainer can print any path in its checkpoint event; the replicas that would read it
    # (and the packaging job that would write beside it) hold the product's credentials.
    get_image_registry().push(COPY)
    trained_job.events.create(kind="checkpoint_saved", step=90, timestamp=timezone.now(),
                              data={"step": 90, "path": path.format(pk=trained_job.pk)})
    image = {"image_uri": COPY} if runtime == "triton" else {}
    with pytest.raises(registry.RegistryError, match="outside job") as refused:
        registry.register(job=trained_job, user=member, step=90, runtime=runtime, **image)
    assert refused.value.field == "step"
    assert not backend.created and not ModelEntry.objects.exists()
