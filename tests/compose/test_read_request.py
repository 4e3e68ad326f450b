"""A job request is read once where it arrives (validation.read_request): the name stripped, a
recovery policy carried in labels moved to ``recovery``, the region defaulted; and a stored
job's request, read again, is the dict the job stores."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client, override_settings

from controlplane.backends.base import Backend
from controlplane.compose import recovery_fields, validation
from controlplane.runs.models import Job
from tests.compose.test_api import post
from tests.vertexplan.composer.helpers import job

POLICY = {"strategy": "failover", "max_recoveries": 4, "fallback": ["STANDARD"], "regions": []}


@override_settings(VERTEX_REGION="europe-west4")
def test_the_edge_strips_the_name_moves_the_labels_and_defaults_the_region() -> None:
    labels = {"team-owner": "ann", **recovery_fields.to_labels(POLICY)}
    read = validation.read_request(job(name="  exp  ", labels=labels))
    assert (read.name, read.region) == ("exp", "europe-west4")
    assert read.recovery == POLICY and read.labels == {"team-owner": "ann"}
    assert read.to_dict()["region"] == "europe-west4"


def test_a_stored_request_reads_back_as_it_is_stored(member_client: Client, backend: Backend,
                                                    django_capture_on_commit_callbacks: Any
                                                    ) -> None:
    body = {**job(name=" exp ", spot=True, workers={"replica_count": 1}), "recovery": POLICY}
    with django_capture_on_commit_callbacks(execute=False):
        response = post(member_client, "api-job-list", body)
    assert response.status_code == 201, response.content
    stored = Job.objects.get()
    assert stored.request["name"] == "exp" and stored.request["scheduling_strategy"] == "SPOT"
    again = validation.read_request(stored.request)
    assert json.dumps(again.to_dict(), sort_keys=True) == json.dumps(stored.request,
                                                                      sort_keys=True)
    assert (again.region, again.scheduling) == (stored.region, "SPOT")
    assert stored.current_attempt().scheduling == "SPOT"
