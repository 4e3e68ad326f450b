"""The compose form: catalogue errors on the right field, nothing created unless valid."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.backends.base import Backend
from controlplane.compose.forms import JobForm
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Team


def form_data(**overrides: Any) -> dict[str, Any]:
    """A valid compose POST: one CPU chief, no workers."""
    data: dict[str, Any] = {
        "team": "vision",
        "name": "exp-1",
        "strategy": "ddp",
        "image_uri": "",
        "args": "--preset tiny --steps 20",
        "chief_machine_type": "n1-standard-4",
        "chief_accelerator_type": "none",
        "chief_accelerator_count": "0",
        "chief_boot_disk_type": "pd-ssd",
        "chief_boot_disk_size_gb": "100",
        "workers_replica_count": "1",
        "workers_machine_type": "",
        "workers_accelerator_type": "",
        "workers_accelerator_count": "",
        "workers_boot_disk_type": "",
        "workers_boot_disk_size_gb": "",
        "restart_job_on_worker_restart": "auto",
    }
    data.update(overrides)
    return {k: v for k, v in data.items() if v is not None}


def errors_shown_on(html: str, field: str) -> str:
    """The text of the error list rendered under one field."""
    match = re.search(rf'<ul class="field-errors" id="errors-{field}"[^>]*>(.*?)</ul>', html,
                      re.S)
    assert match, f"no error list for {field}"
    return match.group(1)


@pytest.mark.parametrize(("overrides", "fields", "words"), [
    pytest.param({"chief_accelerator_type": "NVIDIA_TESLA_A100",
                  "chief_accelerator_count": "1"},
                 ("chief_accelerator_type", "chief_accelerator_count"), "NVIDIA_TESLA_A100",
                 id="a100-on-n1"),
    pytest.param({"chief_machine_type": "a2-highgpu-4g",
                  "chief_accelerator_type": "NVIDIA_TESLA_A100",
                  "chief_accelerator_count": "3"},
                 ("chief_accelerator_count",), "3", id="3-gpus-on-a2-highgpu-4g"),
    pytest.param({"workers_enabled": "on", "workers_replica_count": "0"},
                 ("workers_replica_count",), "0 replicas", id="zero-worker-replicas"),
    pytest.param({"chief_boot_disk_size_gb": "50"},
                 ("chief_boot_disk_size_gb",), "100 GB", id="50-gb-boot-disk"),
])
def test_invalid_compose_shows_the_message_on_the_field(
        member_client: Client, backend: Backend, overrides: dict[str, str],
        fields: tuple[str, ...], words: str) -> None:
    response = member_client.post(reverse("job-compose"), form_data(**overrides))

    assert response.status_code == 400
    assert Job.objects.count() == 0
    form = response.context["form"]
    on = [name for name in fields if name in form.errors]
    assert on, f"expected an error on {fields}, got {form.errors.as_data()}"
    html = response.content.decode()
    assert words in errors_shown_on(html, on[0])
    assert not form.non_field_errors()


def test_an_image_vertex_cannot_pull_is_refused_on_the_image_field(
        member_client: Client, backend: Backend) -> None:
    page = member_client.get(reverse("job-compose")).content.decode()
    assert "push an image from any other registry (nvcr.io" in page
    response = member_client.post(reverse("job-compose"), form_data(
        image_uri="nvcr.io/nvidia/pytorch:24.10-py3"))
    assert response.status_code == 400
    assert Job.objects.count() == 0
    shown = errors_shown_on(response.content.decode(), "image_uri")
    assert "nvcr.io, which Vertex does not pull training images from" in shown
    assert "push it to Artifact Registry" in shown
    assert ("&lt;region&gt;-docker.pkg.dev/&lt;project&gt;/&lt;repository&gt;/nvidia/pytorch"
            in shown)
    # What Vertex does pull: Artifact Registry, gcr.io and Docker Hub.
    for image in ("us-central1-docker.pkg.dev/p/r/trainer:1", "gcr.io/p/trainer:1",
                  "pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime"):
        response = member_client.post(reverse("job-compose"),
                                      form_data(name=f"exp-{len(image)}", image_uri=image))
        assert response.status_code == 302, (image, response.context["form"].errors)


def test_blank_name_gets_the_catalogues_message_on_the_name(member_client: Client,
                                                            backend: Backend) -> None:
    response = member_client.post(reverse("job-compose"), form_data(name=""))
    assert response.status_code == 400
    assert "displayName is required" in errors_shown_on(response.content.decode(), "name")
    assert Job.objects.count() == 0


def test_another_teams_slug_is_refused(member_client: Client, backend: Backend,
                                       other_team: Team) -> None:
    response = member_client.post(reverse("job-compose"), form_data(team="speech"))
    assert response.status_code == 400
    assert "team" in response.context["form"].errors
    assert Job.objects.count() == 0


def test_valid_compose_creates_the_job_and_redirects(
        member_client: Client, backend: Backend, member: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    data = form_data(scheduling_strategy="SPOT", workers_enabled="on", workers_replica_count="2",
                     chief_machine_type="a2-highgpu-1g",
                     chief_accelerator_type="NVIDIA_TESLA_A100", chief_accelerator_count="1")
    # The submission task is queued on commit: capture it instead of needing a broker.
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = member_client.post(reverse("job-compose"), data)

    assert Job.objects.count() == 1
    job = Job.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("job-detail", args=[job.pk])
    assert len(callbacks) == 1
    assert (job.name, job.team.slug, job.created_by, job.state) == (
        "exp-1", "vision", member, JobState.QUEUED)
    spec = job.custom_job["jobSpec"]
    assert spec["scheduling"]["strategy"] == "SPOT"
    pools = spec["workerPoolSpecs"]
    assert len(pools) == 2
    assert [p["replicaCount"] for p in pools] == ["1", "2"]
    for pool in pools:  # the workers inherit the chief's machine
        assert pool["machineSpec"] == {"machineType": "a2-highgpu-1g",
                                       "acceleratorType": "NVIDIA_TESLA_A100",
                                       "acceleratorCount": 1}
    assert spec["scheduling"]["restartJobOnWorkerRestart"] is True
    assert pools[0]["containerSpec"]["args"][-4:] == ["--preset", "tiny", "--steps", "20"]
    assert job.request["workers"] == {"replica_count": 2}

    page = member_client.get(response["Location"])
    assert page.status_code == 200
    assert b"exp-1" in page.content


def test_valid_compose_without_workers_has_one_standard_pool(
        member_client: Client, backend: Backend,
        django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = member_client.post(reverse("job-compose"), form_data())
    assert response.status_code == 302
    spec = Job.objects.get().custom_job["jobSpec"]
    assert len(spec["workerPoolSpecs"]) == 1
    assert spec["scheduling"]["strategy"] == "STANDARD"


def test_validate_shows_errors_world_size_and_custom_job_and_creates_nothing(
        member_client: Client, backend: Backend) -> None:
    ok = member_client.post(reverse("job-validate"),
                            form_data(workers_enabled="on", workers_replica_count="3"))
    html = ok.content.decode()
    assert ok.status_code == 200
    assert 'id="world-size">4<' in html
    assert "workerPoolSpecs" in html and "Valid" in html

    bad = member_client.post(reverse("job-validate"), form_data(chief_boot_disk_size_gb="50"))
    html = bad.content.decode()
    assert "100 GB" in errors_shown_on(html, "chief_boot_disk_size_gb")
    assert 'hx-swap-oob="true"' in html
    assert Job.objects.count() == 0


def test_unsplittable_args_are_an_error_on_args(member_client: Client,
                                                backend: Backend) -> None:
    response = member_client.post(reverse("job-compose"), form_data(args='--name "open'))
    assert "cannot split" in errors_shown_on(response.content.decode(), "args")
    assert Job.objects.count() == 0


def test_clone_prefills_the_form(member_client: Client, member: Any, team: Team,
                                 make_job: Callable[..., Job]) -> None:
    job = make_job(team, member, name="original")
    job.request = {**job.request, "spot": True, "args": ["--steps", "7"],
                   "chief": {"machine_type": "n1-standard-8", "boot_disk_size_gb": 200},
                   "workers": {"replica_count": 3}}
    job.save()
    response = member_client.get(reverse("job-compose"), {"clone": job.pk})
    assert response.status_code == 200
    form = response.context["form"]
    assert form.initial["name"] == "original"
    assert form.initial["team"] == "vision"
    assert form.initial["scheduling_strategy"] == "SPOT"  # stored as the older spot: true
    assert form.initial["args"] == "--steps 7"
    assert form.initial["chief_machine_type"] == "n1-standard-8"
    assert form.initial["chief_boot_disk_size_gb"] == 200
    assert form.initial["workers_enabled"] is True
    assert form.initial["workers_replica_count"] == 3
    assert b'value="original"' in response.content


def test_compose_page_defaults(member_client: Client) -> None:
    response = member_client.get(reverse("job-compose"))
    form = response.context["form"]
    assert form.initial["team"] == "vision"  # the only team this user can submit to
    assert b"--preset tiny --steps 300 --checkpoint-every 50" in response.content


@pytest.mark.parametrize(("key", "field"), [
    ("chief.accelerator_count", "chief_accelerator_count"),
    ("workers.replica_count", "workers_replica_count"),
    ("workers.machine_type", "workers_machine_type"),
    ("name", "name"),
    ("spot", "scheduling_strategy"),  # the older spelling of the provisioning choice
    ("", None),
    ("chief.replica_count", None),
    ("command", "command"),
    ("deepspeed.offload_params", "ds_offload_params"),
    ("batch.global_batch_size", "batch_global"),
    ("reduction_server.replica_count", "reduction_server_replica_count"),
    ("evaluators.machine_type", "evaluators_machine_type"),
    ('labels["cp-job"]', "labels"),
    ("nfs_mounts[0].server", "nfs_mounts"),
    ("workers", None),
])
def test_error_keys_map_to_fields(member: Any, key: str, field: str | None) -> None:
    assert JobForm(user=member).field_for(key) == field


def test_a_refused_submit_summarises_every_error_at_the_top_in_the_forms_words(
        member_client: Client, backend: Backend) -> None:
    """The summary links each error to its field, speaks of the form's labels rather than
    the API's paths, and the side panel and the status beside Submit keep the validation."""
    response = member_client.post(reverse("job-compose"), form_data(
        chief_accelerator_type="NVIDIA_TESLA_T4", chief_accelerator_count="3",
        env="1BAD=x"))
    assert response.status_code == 400 and Job.objects.count() == 0
    html = response.content.decode()
    summary = html[html.index('id="error-summary"'):html.index('id="compose-form"')]
    assert "Submit refused" in summary
    assert 'href="#id_chief_accelerator_count"' in summary
    assert "acceleratorCount" not in summary and "workerPoolSpecs" not in summary
    assert "Accelerators per replica" in summary
    assert "1BAD" in errors_shown_on(html, "env")
    status = html[html.index('id="compose-status"'):]
    assert "error" in status[:400]
    aside = html[html.index('id="validation"'):]
    assert "to fix" in aside and "Validate checks the job" not in aside[:600]


def test_a_refused_export_gets_the_same_summary(member_client: Client,
                                                backend: Backend) -> None:
    response = member_client.post(reverse("job-export-form") + "?format=yaml",
                                  form_data(chief_boot_disk_size_gb="50"))
    assert response.status_code == 400
    assert "Export yaml refused" in response.content.decode()


@pytest.mark.parametrize(("advanced", "words"), [
    ('{"useSpot": true}', "scheduling_strategy: SPOT"),
    ('{"chief": {"use_spot": true}}', "chief has no field"),
    ('{"job_spec_extra": {"persistent_resource_id": "pool-1"}}', "persistentResourceId"),
    ('{"strategy": "zero2", "deepspeed": {"zero": {"stage": 3}}}', "ZeRO stage"),
])
def test_an_unknown_key_in_the_advanced_json_is_an_error_under_it(
        member_client: Client, backend: Backend, advanced: str, words: str) -> None:
    response = member_client.post(reverse("job-compose"), form_data(advanced=advanced))
    assert response.status_code == 400
    assert Job.objects.count() == 0
    form = response.context["form"]
    assert "advanced" in form.errors, form.errors.as_data()
    assert words in errors_shown_on(response.content.decode(), "advanced")
    assert "did you mean" in " ".join(form.errors["advanced"])
