"""On the local emulator every process of a job runs on this machine: a job whose memory plan
needs more than the machine has is refused when it is submitted, naming both figures and the
scaled-down variant; the same job is accepted for Vertex, and its scaled-down variant locally."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client
from django.urls import reverse

from controlplane.backends.base import Backend
from controlplane.compose import local_machine
from controlplane.runs.models import Job
from vertexplan import composer, presets

LLAMA_8B = "llama3-8b-tp2-fsdp4-a100"


def submit(client: Client, request: dict[str, Any]) -> Any:
    return client.post("/api/v1/jobs/", data=json.dumps({**request, "team": "vision"}),
                       content_type="application/json")


def test_a_preset_bigger_than_this_machine_is_refused_locally_with_the_figures(
        member_client: Client, backend: Backend, settings: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = "127.0.0.1:9"
    preset = presets.get(LLAMA_8B)
    response = submit(member_client, preset.job_request())
    assert response.status_code == 400, response.content
    [message] = response.json()["model"]["parameters"]
    plan = composer.compose(composer.JobRequest.from_dict(preset.job_request())).memory_plan
    per_process = plan.total_gib - plan.reserve_gib  # a CPU process keeps no CUDA context
    machine = local_machine.machine_memory_gib()
    assert f"needs {8 * per_process:,.1f} GiB (8 processes x {per_process:,.1f} GiB" in message
    assert f"the machine has {machine:,.1f} GiB" in message
    assert "--scale-down" in message and "Run scaled down locally" in message
    assert Job.objects.count() == 0

    with django_capture_on_commit_callbacks(execute=False):
        scaled = submit(member_client, preset.scaled_down())
        assert scaled.status_code == 201, scaled.content
        settings.VERTEX_EMULATOR_ADDR = ""  # Google's Vertex: it fits the 8 A100s it names
        on_vertex = submit(member_client, preset.job_request())
        assert on_vertex.status_code == 201, on_vertex.content
    assert Job.objects.count() == 2


def test_a_job_that_fits_the_machine_has_no_finding() -> None:
    request = presets.get(LLAMA_8B).job_request()
    composition = composer.compose(composer.JobRequest.from_dict(request))
    plan = composition.memory_plan
    needed = 8 * (plan.total_gib - plan.reserve_gib)
    assert local_machine.overflow(composition, machine_gib=needed) is None
    assert "needs" in local_machine.overflow(composition, machine_gib=needed * 0.99)
    # A TPU slice runs one process per VM, which holds its chips' shares.
    xla = presets.get("tpu-v5e-2x2-xla-fsdp-spot").job_request()
    composition = composer.compose(composer.JobRequest.from_dict(xla))
    plan = composition.memory_plan
    assert "(1 process x " in local_machine.overflow(composition, machine_gib=1.0)
    assert f"{4 * (plan.total_gib - plan.reserve_gib):,.1f} GiB" in local_machine.overflow(
        composition, machine_gib=1.0)


def test_the_compose_page_offers_the_scaled_down_variant(member_client: Client) -> None:
    page = member_client.get(reverse("job-compose"), {"preset": LLAMA_8B})
    assert 'id="scale-down"' in page.content.decode()
    assert "llama-3-8b-scaled" not in str(page.context["form"].initial)
    scaled = member_client.get(reverse("job-compose"), {"preset": LLAMA_8B, "scale": "down"})
    assert 'id="scaled-down"' in scaled.content.decode()
    initial = scaled.context["form"].initial
    assert "llama-3-8b-scaled" in str(initial), initial
    assert initial["strategy"] == "fsdp" and initial["chief_machine_type"] == "a2-highgpu-8g"
    # The old byte-level GPT preset's slug reaches the preset that replaced it.
    assert member_client.get(reverse("job-compose"),
                             {"preset": "gpt-7b-tp2-dp4-a100"}).status_code == 200
