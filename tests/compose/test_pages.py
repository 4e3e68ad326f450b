"""The compose page: presets, templates, import and export, and the memory plan beside it."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from django.test import Client
from django.urls import reverse

from controlplane.backends.base import Backend
from controlplane.compose.forms import JobForm
from controlplane.compose.models import JobTemplate
from controlplane.runs.models import Job
from controlplane.teams.models import Team, TeamPolicy
from tests.vertexplan.composer.helpers import compose_request
from tests.vertexplan.composer.test_interop import VARIED
from vertexplan import interop, presets


def post_data(form: JobForm) -> dict[str, Any]:
    """What a browser posts for an unbound form as it was rendered."""
    data: dict[str, Any] = {}
    for bound in form:
        value = bound.value()
        if getattr(bound.field.widget, "input_type", "") == "checkbox":
            if value:
                data[bound.name] = "on"
            continue
        data[bound.name] = "" if value is None else value
    return data


def shown_then_posted(client: Client, url: str, **params: Any) -> dict[str, Any]:
    page = client.get(url, params)
    assert page.status_code == 200
    return post_data(page.context["form"])


@pytest.mark.parametrize("preset", presets.PRESETS, ids=lambda p: p.slug)
def test_a_preset_opens_in_the_form_and_posts_back_as_the_same_job(
        member_client: Client, backend: Backend, preset: presets.Preset) -> None:
    data = shown_then_posted(member_client, reverse("job-compose"), preset=preset.slug)
    response = member_client.post(reverse("job-validate"), data)
    checked = response.context["checked"]
    assert checked is not None and checked.ok, checked.errors
    assert checked.composition.custom_job == compose_request(preset.job_request()).custom_job


def test_the_validation_panel_shows_the_memory_plan_and_deepspeed_config(
        member_client: Client, backend: Backend) -> None:
    data = shown_then_posted(member_client, reverse("job-compose"),
                             preset="vlm-finetune-4x8-a100-zero2")
    html = member_client.post(reverse("job-validate"), data).content.decode()
    assert 'id="world-size">32<' in html
    assert 'id="memory-plan"' in html and "fits" in html
    assert 'id="deepspeed-config"' in html and "train_batch_size" in html
    data["model_parameters_b"] = "70"
    html = member_client.post(reverse("job-validate"), data).content.decode()
    assert "does not fit" in html


def test_the_estimate_shows_a_modelled_step_time_as_what_it_is(
        member_client: Client, backend: Backend) -> None:
    data = shown_then_posted(member_client, reverse("job-compose"),
                             preset="single-node-fsdp-a100")
    html = member_client.post(reverse("job-validate"), data).content.decode()
    # No model size: no run time, so the rate and the timeout as a cap, not an estimate.
    assert 'id="estimate-step-model"' not in html and 'id="estimate-no-run-time"' in html
    data.update(model_parameters_b="1", model_hidden_size="2048", model_layers="24",
                model_sequence_length="1024")
    html = member_client.post(reverse("job-validate"), data).content.decode()
    assert 'id="estimate-step-model"' in html and "modelled, not measured" in html
    assert " s expected)" in html and "on demand if it runs to its 7-day timeout" in html


def test_a_strategy_setting_error_lands_on_its_input(member_client: Client,
                                                     backend: Backend) -> None:
    data = shown_then_posted(member_client, reverse("job-compose"),
                             preset="vlm-finetune-4x8-a100-zero2")
    data["batch_global"] = "100"
    response = member_client.post(reverse("job-validate"), data)
    form = response.context["form"]
    assert "global batch 100 must equal" in form.errors["batch_global"][0]


@pytest.mark.parametrize("name", ["ps-and-evaluators", "flex-start-everything",
                                  "image-entrypoint-psc", "zero3-offload-own-command"])
def test_an_import_opens_in_the_form_and_submits_the_same_job(
        member_client: Client, backend: Backend, name: str,
        django_capture_on_commit_callbacks: Any) -> None:
    original = compose_request(VARIED[name]).custom_job
    # The team's policy lets its jobs use what these jobs name.
    TeamPolicy.objects.create(
        team=Team.objects.get(), output_prefix="gs://my-bucket",
        service_accounts=["sa@p.iam.gserviceaccount.com"],
        networks=["projects/123/global/networks/vpc"], reservations=["ANY_RESERVATION"],
        allow_web_access=True)
    text = interop.export(original, "yaml", region="us-central1")
    page = member_client.post(reverse("job-import"), {"text": text})
    assert page.status_code == 200
    data = post_data(page.context["form"])
    with django_capture_on_commit_callbacks(execute=False):
        response = member_client.post(reverse("job-compose"), data)
    assert response.status_code == 302, response.context["form"].errors
    assert Job.objects.get().custom_job == original


def test_an_imported_job_outside_the_teams_policy_still_exports(
        member_client: Client, backend: Backend) -> None:
    # A gcloud config from elsewhere, with its own bucket and service account, which this
    # team's policy does not allow: it cannot be submitted here, but it can be written out.
    original = compose_request(VARIED["flex-start-everything"]).custom_job
    assert original["jobSpec"].get("serviceAccount"), "the job names a service account"
    text = interop.export(original, "yaml", region="us-central1")
    page = member_client.post(reverse("job-import"), {"text": text})
    assert page.status_code == 200
    data = post_data(page.context["form"])
    refused = member_client.post(reverse("job-compose"), data)
    assert refused.status_code == 400 and Job.objects.count() == 0
    response = member_client.post(reverse("job-export-form") + "?format=yaml", data)
    assert response.status_code == 200, response.content[-2000:]
    exported = yaml.safe_load(response.content.decode())
    assert exported["serviceAccount"] == original["jobSpec"]["serviceAccount"]


def test_an_import_that_is_not_a_job_says_why(member_client: Client) -> None:
    response = member_client.post(reverse("job-import"), {"text": "- just\n- a list\n"})
    assert response.status_code == 400
    assert b"expected a CustomJob" in response.content


def test_export_from_the_form_downloads_gclouds_file(member_client: Client,
                                                     backend: Backend) -> None:
    data = shown_then_posted(member_client, reverse("job-compose"), preset="cheap-l4-ddp-spot")
    response = member_client.post(reverse("job-export-form") + "?format=yaml", data)
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="l4-spot.yaml"'
    spec = yaml.safe_load(response.content)
    assert spec["scheduling"]["strategy"] == "SPOT"
    data["chief_boot_disk_size_gb"] = "50"
    refused = member_client.post(reverse("job-export-form") + "?format=json", data)
    assert refused.status_code == 400


def test_a_submitted_job_exports(member_client: Client, make_job: Any, team: Team,
                                 member: Any) -> None:
    job = make_job(team, member)
    response = member_client.get(reverse("job-export", args=[job.pk, "python"]))
    assert response.status_code == 200
    compile(response.content.decode(), "job.py", "exec")


def test_save_a_template_and_start_a_job_from_it(member_client: Client,
                                                 team_admin_client: Client, backend: Backend,
                                                 team: Team) -> None:
    data = shown_then_posted(team_admin_client, reverse("job-compose"),
                             preset="single-node-fsdp-a100")
    data.update(template_name="fsdp nightly", template_description="every night")
    saved = team_admin_client.post(reverse("template-save"), data)
    assert saved.status_code == 200 and b"saved" in saved.content
    template = JobTemplate.objects.get()
    assert (template.team, template.request["strategy"]) == (team, "fsdp")
    listing = member_client.get(reverse("template-list")).content.decode()
    assert "fsdp nightly" in listing and "Multi-node VLM fine-tune" in listing
    data = shown_then_posted(member_client, reverse("job-compose"), template=template.pk)
    checked = member_client.post(reverse("job-validate"), data).context["checked"]
    assert checked.ok, checked.errors
    assert checked.composition.custom_job == compose_request(template.request).custom_job
    unnamed = team_admin_client.post(reverse("template-save"), {**data, "template_name": ""})
    assert unnamed.status_code == 400 and b"give the template a name" in unnamed.content


def test_a_member_uses_templates_but_only_admins_save_them(member_client: Client,
                                                           backend: Backend, team: Team) -> None:
    page = member_client.get(reverse("job-compose")).content.decode()
    assert "Save as a team template" not in page
    data = shown_then_posted(member_client, reverse("job-compose"),
                             preset="single-node-fsdp-a100")
    refused = member_client.post(reverse("template-save"), {**data, "template_name": "mine"})
    assert refused.status_code == 403 and b"only the admins of team vision" in refused.content
    assert not JobTemplate.objects.exists()


def test_another_teams_template_is_a_404(member_client: Client, other_team: Team) -> None:
    template = JobTemplate.objects.create(team=other_team, name="t", request={})
    response = member_client.get(reverse("job-compose"), {"template": template.pk})
    assert response.status_code == 404


def test_the_compose_page_lists_presets_and_explains_disks(member_client: Client) -> None:
    html = member_client.get(reverse("job-compose")).content.decode()
    assert "?preset=vlm-finetune-4x8-a100-zero2" in html
    assert "no persistent data disk per node" in html
