"""The compose form's region: a menu of the regions that offer the chosen hardware, starting on
the server's region when it offers it, carried into the job as the advanced JSON's region was;
a region that does not offer the hardware is refused on the field (and by the API), naming the
regions that do."""

from __future__ import annotations

import html as html_text
import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.backends.base import Backend
from controlplane.compose.forms import JobForm
from controlplane.runs.models import Job
from controlplane.teams.models import Team
from tests.compose.test_compose_page import errors_shown_on, form_data

L4 = {"chief_machine_type": "g2-standard-4", "chief_accelerator_type": "NVIDIA_L4",
      "chief_accelerator_count": "1"}
# Regions the catalogue says offer the L4 (data/region_offerings.csv), and one that does not.
L4_REGIONS = ("us-central1", "europe-west4", "asia-east1")
NO_L4 = "us-east5"
V5E = {"chief_machine_type": "ct5lp-hightpu-4t", "chief_accelerator_type": "none",
       "chief_accelerator_count": "0", "chief_tpu_topology": "2x2", "strategy": "tpu_jax"}


def menu(html: str) -> list[str]:
    """The region menu's option values, as rendered."""
    select = re.search(r'<select name="region".*?</select>', html, re.S)
    assert select, "no region menu"
    return re.findall(r'<option value="([^"]*)"', select.group(0))


def selected_region(html: str) -> str | None:
    select = re.search(r'<select name="region".*?</select>', html, re.S)
    assert select
    found = re.search(r'<option value="([^"]*)"[^>]*selected', select.group(0))
    return found.group(1) if found else None


def test_the_page_offers_the_regions_of_the_hardware_starting_on_the_servers(
        member_client: Client, settings: Any) -> None:
    settings.VERTEX_REGION = "europe-west4"
    html = member_client.get(reverse("job-compose")).content.decode()
    assert selected_region(html) == "europe-west4"
    # A CPU job: every region with custom training, us-west2 (not in the table) not among them.
    assert {"us-central1", "europe-west4", "us-east5"} <= set(menu(html))
    assert "us-west2" not in menu(html)
    assert 'data-source="' + reverse("job-regions") + '"' in html


def test_the_menu_follows_the_hardware_and_falls_back_to_the_first_that_offers_it(
        member: Any, settings: Any) -> None:
    settings.VERTEX_REGION = "us-east1"  # offers the L4, not the TPU v5e
    l4 = JobForm(user=member, initial={"chief_machine_type": "g2-standard-4",
                                       "chief_accelerator_type": "NVIDIA_L4"})
    offered = [name for name, _ in l4.fields["region"].widget.choices]
    assert NO_L4 not in offered and set(L4_REGIONS) <= set(offered)
    assert l4.fields["region"].initial == "us-east1"

    tpu = JobForm(user=member, initial={"chief_machine_type": "ct5lp-hightpu-4t"})
    offered = [name for name, _ in tpu.fields["region"].widget.choices]
    assert "us-east1" not in offered and offered[0] == "us-central1"
    assert tpu.fields["region"].initial == "us-central1"


def test_the_chosen_region_is_the_jobs(member_client: Client, backend: Backend,
                                       django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = member_client.post(reverse("job-compose"),
                                      form_data(region="europe-west4", **L4))
    assert response.status_code == 302, response.context["form"].errors
    job = Job.objects.get()
    assert job.region == "europe-west4" and job.request["region"] == "europe-west4"


@pytest.mark.parametrize(("region", "words"), [
    pytest.param(NO_L4, f"{NO_L4} does not offer NVIDIA_L4", id="not-offered"),
    pytest.param("mars-north1", "'mars-north1' is not a Vertex training region", id="unknown"),
    # A Vertex region the catalogue's offerings do not cover: not in the menu, so not taken.
    pytest.param("us-west2", "does not list us-west2", id="not-in-the-menu"),
])
def test_a_region_without_the_hardware_is_refused_on_the_field_naming_the_valid_ones(
        member_client: Client, backend: Backend, region: str, words: str) -> None:
    response = member_client.post(reverse("job-compose"), form_data(region=region, **L4))
    assert response.status_code == 400
    assert Job.objects.count() == 0
    shown = html_text.unescape(errors_shown_on(response.content.decode(), "region"))
    assert words in shown
    assert all(valid in shown for valid in L4_REGIONS)
    assert NO_L4 not in shown.split("NVIDIA_L4:")[-1]
    # The refused value stays selected beside its error.
    assert selected_region(response.content.decode()) == region


def test_validate_refuses_a_tpu_in_a_region_without_it(member_client: Client,
                                                      backend: Backend) -> None:
    response = member_client.post(reverse("job-validate"), form_data(region="us-east1", **V5E))
    shown = errors_shown_on(response.content.decode(), "region")
    assert "us-east1 does not offer TPU v5e" in shown and "us-central1" in shown


def test_the_advanced_json_region_still_lays_over_the_field(
        member_client: Client, backend: Backend,
        django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = member_client.post(reverse("job-compose"), form_data(
            region="us-central1", advanced='{"region": "europe-west4"}', **L4))
    assert response.status_code == 302
    assert Job.objects.get().region == "europe-west4"

    refused = member_client.post(reverse("job-compose"), form_data(
        region="us-central1", advanced=json.dumps({"region": NO_L4}), **L4))
    assert refused.status_code == 400
    assert f"{NO_L4} does not offer NVIDIA_L4" in errors_shown_on(
        refused.content.decode(), "advanced")


def test_a_clone_keeps_its_region_in_the_field(member_client: Client, member: Any, team: Team,
                                               make_job: Callable[..., Job]) -> None:
    job = make_job(team, member, name="original")
    job.request = {**job.request, "region": "europe-west4",
                   "chief": {"machine_type": "g2-standard-4", "accelerator_type": "NVIDIA_L4",
                             "accelerator_count": 1}}
    job.save()
    page = member_client.get(reverse("job-compose"), {"clone": job.pk})
    assert page.context["form"].initial["region"] == "europe-west4"
    assert "advanced" not in page.context["form"].initial
    assert selected_region(page.content.decode()) == "europe-west4"

    job.request = {**job.request, "region": NO_L4}
    job.save()
    page = member_client.get(reverse("job-compose"), {"clone": job.pk})
    assert page.context["form"].initial["region"] == "us-central1"
    assert any(f"ran in {NO_L4}" in w for w in page.context["warnings"])


def test_the_menus_json_lists_the_regions_of_every_pools_hardware(
        member_client: Client, settings: Any) -> None:
    url = reverse("job-regions")
    l4 = member_client.get(url, {"machine_type": "g2-standard-4",
                                 "accelerator_type": "NVIDIA_L4"}).json()
    names = [r["name"] for r in l4["regions"]]
    assert NO_L4 not in names and set(L4_REGIONS) <= set(names)
    assert l4["default"] == "us-central1"
    assert {"name": "europe-west4", "label": "europe-west4 (Netherlands)"} in l4["regions"]

    settings.VERTEX_REGION = "us-east1"
    # A v5e chief with L4 evaluators: the regions that offer both.
    both = member_client.get(url + "?machine_type=ct5lp-hightpu-4t&accelerator_type=none"
                             "&machine_type=g2-standard-4&accelerator_type=NVIDIA_L4").json()
    names = [r["name"] for r in both["regions"]]
    assert "us-east1" not in names and "us-east5" not in names
    assert names[0] == both["default"] == "us-central1" and "europe-west4" in names


def test_the_menus_json_needs_a_login() -> None:
    assert Client().get(reverse("job-regions")).status_code == 302


L4_REQUEST = {"name": "l4", "chief": {"machine_type": "g2-standard-4",
                                      "accelerator_type": "NVIDIA_L4", "accelerator_count": 1}}


def api(client: Client, name: str, body: Any, query: str = "") -> Any:
    return client.post(reverse(name) + query, data=json.dumps(body),
                       content_type="application/json")


def test_the_api_refuses_a_region_without_the_hardware_on_the_region(
        member_client: Client, backend: Backend) -> None:
    dry = api(member_client, "api-job-validate", {**L4_REQUEST, "region": NO_L4}).json()
    assert dry["valid"] is False
    [message] = dry["errors"]["region"]
    assert f"{NO_L4} does not offer NVIDIA_L4" in message and "europe-west4" in message

    created = api(member_client, "api-job-list", {**L4_REQUEST, "region": NO_L4})
    assert created.status_code == 400
    assert "europe-west4" in created.json()["region"][0]
    assert Job.objects.count() == 0

    custom_job = {"displayName": "l4", "jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "g2-standard-4", "acceleratorType": "NVIDIA_L4",
                        "acceleratorCount": 1},
        "replicaCount": "1",
        "containerSpec": {"imageUri": "us-docker.pkg.dev/p/t/trainer:1"}}]}}
    as_sent = api(member_client, "api-job-list", custom_job, f"?region={NO_L4}")
    assert as_sent.status_code == 400 and "us-central1" in as_sent.json()["region"][0]
    assert Job.objects.count() == 0
