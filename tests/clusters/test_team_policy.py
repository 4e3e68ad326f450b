"""Team policy on clusters: a cluster's nodes run as a service account and join a network only
when the team's admins allowed them, as a job's replicas do; anything else is a field error on
the cluster's own field, through the API and the form, and nothing is created."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from controlplane.clusters import lifecycle, policy
from controlplane.clusters.models import Cluster
from controlplane.teams import policy as team_policy
from controlplane.teams.models import Team

pytestmark = pytest.mark.django_db

SA = "trainer-vision@my-project.iam.gserviceaccount.com"
NET = "projects/123/global/networks/vision-vpc"
THEIR_SA = "trainer-speech@my-project.iam.gserviceaccount.com"
THEIR_NET = "projects/123/global/networks/speech-vpc"
CLUSTER = {
    "name": "ray-a",
    "pools": [{"id": "head", "machine_type": "n1-standard-4"},
              {"id": "workers", "machine_type": "n1-standard-8", "replica_count": 2}],
    "ray": {"version": "2.47.1"},
}


def create(user: Any, **fields: Any):
    client = APIClient()
    client.force_authenticate(user)
    return client.post("/api/v1/clusters/", {**CLUSTER, **fields}, format="json")


@pytest.fixture
def speech_owns_theirs(outsider: Any) -> Team:
    speech = Team.objects.get(slug="speech")
    team_policy.update(speech, {"service_accounts": [THEIR_SA], "networks": [THEIR_NET]})
    return speech


@pytest.mark.parametrize("fields, key", [
    ({"service_account": THEIR_SA}, "service_account"),
    ({"network": THEIR_NET}, "network"),
    ({"service_account": "attacker@evil-project.iam.gserviceaccount.com"}, "service_account"),
])
def test_another_teams_account_or_network_is_a_field_error(member, queued, speech_owns_theirs,
                                                           fields, key):
    answer = create(member, **fields)
    assert answer.status_code == 400, answer.content
    body = answer.json()
    assert set(body) == {key}, body
    assert "team vision" in body[key][0] and "none (team admins add them)" in body[key][0]
    assert not Cluster.objects.exists() and queued == []


def test_the_teams_own_account_and_network_are_allowed(member, team, queued,
                                                       speech_owns_theirs):
    team_policy.update(team, {"service_accounts": [SA], "networks": [NET]})
    answer = create(member, service_account=SA, network=NET)
    assert answer.status_code == 201, answer.content
    resource = Cluster.objects.get().resource
    assert resource["resourceRuntimeSpec"]["serviceAccountSpec"]["serviceAccount"] == SA
    assert resource["network"] == NET
    # Allowed for vision, still refused for speech's member (and the message lists vision's
    # nothing: speech's own list).
    refused = create(speech_owns_theirs.memberships.first().user, service_account=SA)
    assert refused.status_code == 400 and THEIR_SA in refused.json()["service_account"][0]
    assert Cluster.objects.count() == 1


def test_a_pool_consuming_another_teams_reservation_is_named(team):
    """The composer offers no reservations yet; a resource that carries one is still held."""
    plan = lifecycle.check_cluster(CLUSTER, "us-central1")
    resource = dict(plan.resource)
    pools = [dict(p) for p in resource["resourcePools"]]
    pools[1]["machineSpec"] = {**pools[1]["machineSpec"], "reservationAffinity": {
        "reservationAffinityType": "ANY_RESERVATION"}}
    resource["resourcePools"] = pools
    errors = policy.violations(resource, team)
    assert list(errors) == ["pools[1].reservation"]
    assert "another team's reservation" in errors["pools[1].reservation"][0]


def test_the_form_puts_the_refusal_on_the_field_at_price_and_create(member, queued,
                                                                   speech_owns_theirs):
    client = Client()
    client.force_login(member)
    page = client.get("/clusters/new/").content.decode()
    key = re.search(r'name="idempotency_key" value="([0-9a-f]+)"', page).group(1)
    data = {"team": "vision", "name": "ray-a", "ray_version": "2.47.1", "idempotency_key": key,
            "service_account": THEIR_SA, "network": THEIR_NET,
            "pools-TOTAL_FORMS": "1", "pools-INITIAL_FORMS": "0", "pools-MIN_NUM_FORMS": "0",
            "pools-MAX_NUM_FORMS": "16", "pools-0-id": "head",
            "pools-0-machine_type": "n1-standard-4", "pools-0-replica_count": "1"}
    for action in ("price", "create"):
        answer = client.post("/clusters/new/", {**data, "action": action,
                                                "seen_hourly_micros": "1"})
        assert answer.status_code == 400
        text = answer.content.decode()
        assert 'id="errors-service_account"' in text and 'id="errors-network"' in text, text
        assert "Create for" not in text  # never priced, so never one click from created
    assert not Cluster.objects.exists() and queued == []
