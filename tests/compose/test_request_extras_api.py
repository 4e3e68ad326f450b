"""The request's priority and framework through the REST API, as the compose form takes them:
accepted and kept on the job's request; a framework the control plane does not read is refused
on its field with the valid names, and nothing is created."""

from __future__ import annotations

import json
from typing import Any

from django.test import Client

from controlplane.backends.base import Backend
from controlplane.runs.models import Job

BODY = {"name": "own", "team": "vision", "chief": {"machine_type": "n1-standard-4"},
        "command": ["python", "train.py"]}


def post(client: Client, body: dict[str, Any]) -> Any:
    return client.post("/api/v1/jobs/", data=json.dumps(body), content_type="application/json")


def test_the_api_takes_a_priority_and_a_framework(member_client: Client, backend: Backend,
                                                  django_capture_on_commit_callbacks: Any
                                                  ) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        response = post(member_client, {**BODY, "priority": "low", "framework": "lightning"})
    assert response.status_code == 201, response.content
    job = Job.objects.get()
    assert (job.request["priority"], job.request["framework"]) == ("low", "lightning")
    assert job.priority == "low"


def test_an_unknown_framework_is_refused_on_its_field(member_client: Client,
                                                       backend: Backend) -> None:
    response = post(member_client, {**BODY, "framework": "keras"})
    assert response.status_code == 400
    message = " ".join(response.json()["framework"])
    assert "'keras' is not one the control plane reads" in message and "lightning" in message
    assert Job.objects.count() == 0
