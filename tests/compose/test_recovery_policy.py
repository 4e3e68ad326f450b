"""A recovery policy per job: the API and the form take it, a template keeps it, an export
carries it as labels and an import restores it; bad values are refused by field."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.backends import base
from controlplane.backends.base import Backend
from controlplane.compose import recovery_fields
from controlplane.runs.models import Job
from tests.compose.test_api import post
from tests.compose.test_compose_page import form_data


@pytest.fixture
def vertex_regions(settings: Any) -> Iterator[Backend]:
    """The real Vertex backend (it can be built for any region), pointed at an emulator
    address: nothing here submits, so nothing needs to answer there."""
    settings.VERTEX_EMULATOR_ADDR = "127.0.0.1:9"
    settings.CP_BACKEND = "controlplane.backends.training.VertexBackend"
    base.get_backend.cache_clear()
    yield base.get_backend()
    base.get_backend.cache_clear()


POLICY = {"strategy": "failover", "max_recoveries": 4, "fallback": ["FLEX_START", "STANDARD"],
          "regions": ["us-east1"]}


def l4_job(**extra: Any) -> dict[str, Any]:
    return {"name": "l4", "scheduling_strategy": "SPOT",
            "chief": {"machine_type": "g2-standard-8", "accelerator_type": "NVIDIA_L4",
                      "accelerator_count": 1}, **extra}


def test_the_api_takes_a_recovery_policy(member_client: Client, vertex_regions: Backend,
                                         django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = post(member_client, "api-job-list", l4_job(recovery=POLICY))
    assert response.status_code == 201, response.content
    job = Job.objects.get()
    assert (job.recovery_strategy, job.max_recoveries) == ("failover", 4)
    assert job.recovery_options["fallback"] == ["FLEX_START", "STANDARD"]
    assert job.recovery_options["regions"] == ["us-east1"]


def test_bad_recovery_values_are_refused_by_field(member_client: Client,
                                                  vertex_regions: Backend) -> None:
    cases = [
        ({"strategy": "pray"}, "recovery", "strategy"),
        ({"fallback": ["CHEAP"]}, "recovery", "fallback"),
        ({"max_recoveries": 99}, "recovery", "max_recoveries"),
        ({"regions": ["mars-north1"]}, "recovery", "regions"),
        ({"color": "red"}, "recovery", "color"),
    ]
    for policy, key, sub in cases:  # errors nested as the request is
        response = post(member_client, "api-job-list", l4_job(recovery=policy))
        assert response.status_code == 400, (policy, response.content)
        errors = response.json()
        assert errors[key][sub], (policy, errors)
    assert not Job.objects.exists()
    mars = post(member_client, "api-job-validate", l4_job(recovery={"regions": ["mars-north1"]}))
    assert "not a Vertex training region" in mars.json()["errors"]["recovery.regions"][0]


def test_a_backend_bound_to_one_region_refuses_failover_regions(member_client: Client,
                                                                backend: Backend) -> None:
    response = post(member_client, "api-job-validate", l4_job(recovery=POLICY))
    assert "submits to us-central1 only" in response.json()["errors"]["recovery.regions"][0]


def test_export_carries_the_policy_as_labels_and_import_restores_it(
        member_client: Client, vertex_regions: Backend) -> None:
    # gcloud YAML: on the command line it documents (--labels=...).
    gcloud = post(member_client, "api-job-export", l4_job(recovery=POLICY), "?fmt=yaml")
    assert gcloud.status_code == 200, gcloud.content
    assert "--labels=cp-recovery-strategy=failover" in gcloud.content.decode()
    # REST JSON: in the CustomJob's labels; importing it restores the policy.
    rest = post(member_client, "api-job-export", l4_job(recovery=POLICY), "?fmt=json")
    document = json.loads(rest.content)
    assert document["labels"]["cp-recovery-fallback"] == "flex-start_standard"
    imported = post(member_client, "api-job-import", document).json()
    assert imported["request"]["recovery"] == POLICY, imported
    assert "cp-recovery-strategy" not in (imported["request"].get("labels") or {})


def test_label_round_trip() -> None:
    labels = recovery_fields.to_labels(POLICY)
    assert all(len(v) <= 63 and v == v.lower() for v in labels.values())
    policy, rest = recovery_fields.from_labels({**labels, "team": "x"})
    assert policy == POLICY and rest == {"team": "x"}


def test_the_form_takes_it_and_a_clone_shows_it(client: Client, member: Any,
                                               vertex_regions: Backend,
                                               django_capture_on_commit_callbacks: Any) -> None:
    client.force_login(member)
    data = form_data(chief_machine_type="g2-standard-8", chief_accelerator_type="NVIDIA_L4",
                     chief_accelerator_count="1", workers_replica_count="0",
                     scheduling_strategy="SPOT", recovery_strategy="failover",
                     recovery_max_recoveries="4", recovery_fallback="FLEX_START, STANDARD",
                     recovery_regions="us-east1")
    with django_capture_on_commit_callbacks(execute=False):
        response = client.post(reverse("job-compose"), data)
    assert response.status_code == 302, response.content.decode()[-3000:]
    job = Job.objects.get()
    assert job.request["recovery"] == POLICY and job.max_recoveries == 4
    page = client.get(reverse("job-compose") + f"?clone={job.pk}").content.decode()
    assert 'value="FLEX_START, STANDARD"' in page and 'value="us-east1"' in page
    bad = client.post(reverse("job-validate"), {**data, "recovery_regions": "mars-north1"})
    assert "not a Vertex training region" in bad.content.decode()


def test_a_template_keeps_the_policy(team_admin_client: Client, vertex_regions: Backend) -> None:
    saved = post(team_admin_client, "api-template-list",
                 {"name": "spot-l4", "request": l4_job(recovery=POLICY)})
    assert saved.status_code == 201, saved.content
    assert saved.json()["request"]["recovery"] == POLICY
    # From a CustomJob export: the labels become the policy.
    exported = json.loads(post(team_admin_client, "api-job-export", l4_job(recovery=POLICY),
                               "?fmt=json").content)
    from_labels = post(team_admin_client, "api-template-list",
                       {"name": "spot-l4-json", "request": exported})
    assert from_labels.json()["request"]["recovery"] == POLICY
    page = team_admin_client.get(reverse("job-compose") + f"?template={saved.json()['id']}")
    assert 'value="us-east1"' in page.content.decode()
