"""Sweeps through the REST API and the pages: team-scoped, field errors that change nothing,
roles, clone, export and import, and the detail page's trials with the best one marked."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from controlplane.sweeps import lifecycle
from controlplane.sweeps.models import Sweep
from controlplane.teams.models import Team
from tests.sweeps.conftest import sweep_body

pytestmark = pytest.mark.django_db


def api_as(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def page_as(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def made(team: Team, member: Any, tuning_backend: Any) -> Sweep:
    response = api_as(member).post("/api/v1/sweeps/", {**sweep_body(), "team": "vision"},
                                   format="json")
    assert response.status_code == 201, response.content
    sweep = Sweep.objects.get(pk=response.json()["id"])
    for number, (lr, loss) in enumerate([(1e-3, 2.4), (2e-3, 2.2), (3e-3, 2.9)], start=1):
        sweep.trials.create(trial_id=str(number), number=number, state="SUCCEEDED",
                            parameters={"lr": lr}, final_metrics={"val_loss": loss},
                            final_step=4)
    return sweep


def test_create_answers_with_the_sweep(made: Sweep, member: Any) -> None:
    body = api_as(member).get(f"/api/v1/sweeps/{made.pk}/").json()
    assert body["state"] == "QUEUED" and body["team"] == "vision"
    assert body["max_trial_count"] == 3 and body["estimate_micros"] > 0
    assert body["best_trial"] == "2"
    assert [t["best"] for t in body["trials"]] == [False, True, False]
    assert body["trials"][1]["objective"] == 2.2
    assert body["tuning_job"]["studySpec"]["metrics"][0]["metricId"] == "val_loss"


def test_another_team_sees_nothing(made: Sweep, outsider: Any) -> None:
    client = api_as(outsider)
    assert client.get(f"/api/v1/sweeps/{made.pk}/").status_code == 404
    assert client.get("/api/v1/sweeps/").json()["count"] == 0
    assert client.post(f"/api/v1/sweeps/{made.pk}/cancel/").status_code == 404
    assert client.get(f"/api/v1/sweeps/{made.pk}/clone/").status_code == 404
    assert page_as(outsider).get(f"/sweeps/{made.pk}/").status_code == 404
    # Nor can it submit to a team it is not in.
    response = client.post("/api/v1/sweeps/", {**sweep_body(), "team": "vision"}, format="json")
    assert response.status_code == 400 and "team" in response.json()


def test_a_viewer_reads_but_cannot_submit_or_cancel(made: Sweep, viewer: Any) -> None:
    client = api_as(viewer)
    assert client.get(f"/api/v1/sweeps/{made.pk}/").status_code == 200
    assert client.post(f"/api/v1/sweeps/{made.pk}/cancel/").status_code == 403
    response = client.post("/api/v1/sweeps/", {**sweep_body(), "team": "vision"}, format="json")
    assert response.status_code == 403


@pytest.mark.parametrize(("changes", "field"), [
    ({"parameters": [{"parameter_id": "x; rm -rf /", "type": "DOUBLE", "min_value": 0,
                      "max_value": 1}]}, "parameters[0].parameter_id"),
    ({"max_trial_count": "many"}, "max_trial_count"),
    ({"trial_hours": "-3"}, "trial_hours"),
    ({"trial_job": {"chief": {"machine_type": "n1-imaginary-4"}}}, "trial_job.chief.machine_type"),
    ({"trial_job": {"chief": {"machine_type": "n1-standard-4"},
                    "base_output_directory": "gs://other-team/x"}},
     "trial_job.base_output_directory"),
])
def test_bad_input_names_the_field_and_creates_nothing(member: Any, tuning_backend: Any,
                                                       changes: dict, field: str) -> None:
    response = api_as(member).post("/api/v1/sweeps/", {**sweep_body(**changes),
                                                       "team": "vision"}, format="json")
    assert response.status_code == 400
    assert field in response.json(), response.json()
    assert Sweep.objects.count() == 0


def test_validate_says_what_would_be_sent(member: Any) -> None:
    response = api_as(member).post("/api/v1/sweeps/validate/", sweep_body(), format="json")
    assert response.status_code == 200 and response.json()["valid"] is True
    assert response.json()["tuning_job"]["maxTrialCount"] == 3
    bad = api_as(member).post("/api/v1/sweeps/validate/", sweep_body(algorithm="BAYES"),
                              format="json").json()
    assert bad["valid"] is False and "algorithm" in bad["errors"]
    assert api_as(member).post("/api/v1/sweeps/validate/", [None],
                               format="json").status_code == 400
    assert Sweep.objects.count() == 0


def test_cancel_clone_export_and_import(made: Sweep, member: Any, tuning_backend: Any) -> None:
    client = api_as(member)
    clone = client.get(f"/api/v1/sweeps/{made.pk}/clone/").json()
    assert clone["display_name"] == "lr-sweep-clone" and clone["team"] == "vision"
    assert client.post("/api/v1/sweeps/", clone, format="json").status_code == 201
    for fmt in ("yaml", "json"):
        text = client.get(f"/api/v1/sweeps/{made.pk}/export/", {"fmt": fmt}).json()["text"]
        imported = client.post("/api/v1/sweeps/import/", {"text": text}, format="json").json()
        assert imported["errors"] == {}
        assert lifecycle.check(imported["request"], None).composition.tuning_job == \
            made.tuning_job
    assert client.get(f"/api/v1/sweeps/{made.pk}/export/", {"fmt": "xml"}).status_code == 400
    assert client.post("/api/v1/sweeps/import/", {"text": "a: [b"},
                       format="json").status_code == 400
    response = client.post(f"/api/v1/sweeps/{made.pk}/cancel/")
    assert response.status_code == 202 and response.json()["state"] == "CANCELLED"
    assert client.post(f"/api/v1/sweeps/{made.pk}/cancel/").status_code == 409


def test_the_pages(made: Sweep, member: Any) -> None:
    client = page_as(member)
    listing = client.get("/sweeps/").content.decode()
    assert f'data-sweep="{made.pk}"' in listing and "lr-sweep" in listing
    page = client.get(f"/sweeps/{made.pk}/").content.decode()
    assert page.count("data-trial=") == 3
    assert '<tr id="trial-2" data-trial="2" class="best" data-best="true">' in page
    chart = json.loads(page.split('id="sweep-chart-data" type="application/json">')[1]
                       .split("</script>")[0])
    assert chart["axes"] == ["lr", "val_loss"]
    assert [t["best"] for t in chart["trials"]] == [False, True, False]
    assert "# gcloud ai hp-tuning-jobs create" in page
    prefilled = client.get(f"/sweeps/new/?from={made.pk}").content.decode()
    assert "lr-sweep-clone" in prefilled


def test_the_new_sweep_page_submits_or_names_the_problem(member: Any, tuning_backend: Any
                                                         ) -> None:
    client = page_as(member)
    response = client.post("/sweeps/new/", {"team": "vision",
                                            "body": json.dumps(sweep_body(max_trial_count=0))})
    assert response.status_code == 400 and "max_trial_count" in response.content.decode()
    assert Sweep.objects.count() == 0
    response = client.post("/sweeps/new/", {"team": "vision", "body": json.dumps(sweep_body())})
    assert response.status_code == 302
    sweep = Sweep.objects.get()
    assert response["Location"] == f"/sweeps/{sweep.pk}/"


def test_a_retried_create_with_one_idempotency_key_makes_one_sweep(
        team: Team, member: Any, tuning_backend: Any) -> None:
    client = api_as(member)
    body = {**sweep_body(), "team": "vision"}
    first = client.post("/api/v1/sweeps/", body, format="json", HTTP_IDEMPOTENCY_KEY="s-1")
    again = client.post("/api/v1/sweeps/", body, format="json", HTTP_IDEMPOTENCY_KEY="s-1")
    assert first.status_code == again.status_code == 201, first.content
    assert again.json()["id"] == first.json()["id"]
    assert again["Idempotent-Replayed"] == "true"
    other = client.post("/api/v1/sweeps/", {**body, "display_name": "other"}, format="json",
                        HTTP_IDEMPOTENCY_KEY="s-1")
    assert other.status_code == 409
    assert Sweep.objects.count() == 1
