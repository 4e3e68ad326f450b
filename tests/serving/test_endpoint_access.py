"""Dedicated and private (Private Service Connect) endpoints from the API and the form: the
access is checked field by field before anything is created, sent to Vertex as asked, the
addresses Vertex gives are recorded, a dedicated endpoint is called at its own DNS name, and a
private one is neither probed nor called from outside its allowlisted networks."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.serving import lifecycle, prober
from controlplane.serving.models import Endpoint
from tests.serving.fakes import FakeServing
from tests.serving.test_lifecycle import ready_entry

URL = "/api/v1/serving/endpoints/"


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.parametrize(("body", "field", "words"), [
    ({"access": "private"}, "psc_project_allowlist", "needs the projects allowed"),
    ({"access": "private", "psc_project_allowlist": ["UPPER-case"]},
     "psc_project_allowlist", "entry 0 ('UPPER-case') is not a project id"),
    ({"access": "private", "psc_project_allowlist": ["ok-project", "x; rm -rf"]},
     "psc_project_allowlist", "entry 1"),
    ({"access": "dedicated", "psc_project_allowlist": ["ok-project"]},
     "psc_project_allowlist", "only a private endpoint"),
    ({"access": "vpc"}, "access", "not a valid choice"),
])
def test_bad_access_is_refused_on_its_field_and_creates_nothing(
        fake: FakeServing, queued: list, member: Any, body: dict, field: str,
        words: str) -> None:
    response = api(member).post(URL, {"name": "e", **body}, format="json")
    assert response.status_code == 400, response.content
    assert words in " ".join(response.json()[field])
    assert Endpoint.objects.count() == 0 and queued == []


def test_a_dedicated_endpoint_records_its_dns_and_is_called_there(
        fake: FakeServing, queued: list, trained_job: Any, member: Any) -> None:
    response = api(member).post(URL, {"name": "ded", "access": "dedicated"}, format="json")
    assert response.status_code == 201, response.content
    endpoint_id = response.json()["id"]
    lifecycle.send_create(endpoint_id)
    endpoint = Endpoint.objects.get(pk=endpoint_id)
    name = fake.endpoint_name(endpoint.vertex_endpoint_id)
    assert fake.access[name].dedicated and not fake.access[name].psc_project_allowlist
    assert endpoint.state == Endpoint.State.READY
    assert endpoint.dedicated_dns == f"{endpoint.vertex_endpoint_id}.dedicated.test"
    assert api(member).get(f"{URL}{endpoint_id}/").json()["dedicated_dns"] == \
        endpoint.dedicated_dns

    entry = ready_entry(trained_job, member)
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                  machine_type="n1-standard-4")
    lifecycle.send_deploy(deployment.pk)
    response = api(member).post(f"{URL}{endpoint_id}/predict/", {"instances": ["def "]},
                                format="json")
    assert response.status_code == 200, response.content
    assert fake.predicted_at == [endpoint.dedicated_dns]


def test_a_private_endpoint_is_created_unprobed_and_never_called_from_outside(
        fake: FakeServing, queued: list, trained_job: Any, member: Any) -> None:
    response = api(member).post(URL, {"name": "priv", "access": "private",
                                      "psc_project_allowlist": ["consumer-a", "123456789012",
                                                                "consumer-a"]},
                                format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["psc_project_allowlist"] == ["consumer-a", "123456789012"]
    assert body["probe_enabled"] is False
    lifecycle.send_create(body["id"])
    endpoint = Endpoint.objects.get(pk=body["id"])
    name = fake.endpoint_name(endpoint.vertex_endpoint_id)
    assert fake.access[name].psc_project_allowlist == ("consumer-a", "123456789012")
    assert endpoint.service_attachment == f"sa/{endpoint.vertex_endpoint_id}"

    entry = ready_entry(trained_job, member)
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                  machine_type="n1-standard-4")
    lifecycle.send_deploy(deployment.pk)
    assert endpoint not in prober.due(timezone.now() + timedelta(days=1))
    response = api(member).post(f"{URL}{endpoint.pk}/predict/", {"instances": ["x"]},
                                format="json")
    assert response.status_code == 409
    assert endpoint.service_attachment in response.json()["detail"]
    assert fake.predicted_at == []


def test_the_form_creates_a_private_endpoint_or_says_which_field_is_wrong(
        fake: FakeServing, queued: list, client: Client, member: Any, team: Any) -> None:
    client.force_login(member)
    bad = client.post("/serving/endpoints/new/", {
        "team": team.pk, "name": "p", "probe_interval_s": "10", "access": "private",
        "psc_project_allowlist": ""}, follow=True)
    assert Endpoint.objects.count() == 0
    assert "psc_project_allowlist" in bad.content.decode()
    assert "needs the projects allowed to connect" in bad.content.decode()
    good = client.post("/serving/endpoints/new/", {
        "team": team.pk, "name": "p", "probe_interval_s": "10", "access": "private",
        "psc_project_allowlist": "consumer-a, consumer-b"})
    assert good.status_code == 302
    endpoint = Endpoint.objects.get()
    assert endpoint.access == "private"
    assert endpoint.psc_project_allowlist == ["consumer-a", "consumer-b"]
