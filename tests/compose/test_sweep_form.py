"""The sweep form: the compose form as the trial job, a parameter table with conditional
rows, and the study; it creates exactly the sweep the API creates for the same request, shows
each problem beside its field (creating nothing), and prices the whole sweep first."""

from __future__ import annotations

import re
from html import unescape
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from controlplane.sweeps.models import Sweep
from controlplane.teams.models import Team
from tests.compose.test_compose_page import form_data

pytestmark = pytest.mark.django_db

ROW_FIELDS = ("parameter_id", "type", "min_value", "max_value", "values", "scale_type",
              "parent", "parent_values")
ROWS = [
    {"parameter_id": "lr", "type": "DOUBLE", "min_value": "0.0001", "max_value": "0.01",
     "scale_type": "UNIT_LOG_SCALE"},
    {"parameter_id": "warmup", "type": "INTEGER", "min_value": "0", "max_value": "200",
     "scale_type": "UNIT_LINEAR_SCALE"},
    {"parameter_id": "optimizer", "type": "CATEGORICAL", "values": "adamw, sgd"},
    {"parameter_id": "momentum", "type": "DOUBLE", "min_value": "0.5", "max_value": "0.99",
     "parent": "optimizer", "parent_values": "sgd"},
    {},  # a row left empty
]
# The same sweep as the API takes it, written by hand.
API_STUDY = {
    "display_name": "lr-sweep",
    "metrics": [{"metric_id": "val_loss", "goal": "MINIMIZE"}],
    "algorithm": "RANDOM_SEARCH",
    "parameters": [
        {"parameter_id": "lr", "type": "DOUBLE", "min_value": 1e-4, "max_value": 1e-2,
         "scale_type": "UNIT_LOG_SCALE"},
        {"parameter_id": "warmup", "type": "INTEGER", "min_value": 0, "max_value": 200,
         "scale_type": "UNIT_LINEAR_SCALE"},
        {"parameter_id": "optimizer", "type": "CATEGORICAL", "values": ["adamw", "sgd"],
         "conditional_parameters": [{
             "parent_values": ["sgd"],
             "parameter": {"parameter_id": "momentum", "type": "DOUBLE", "min_value": 0.5,
                           "max_value": 0.99}}]},
    ],
    "max_trial_count": 6, "parallel_trial_count": 2, "max_failed_trial_count": 1,
    "trial_hours": "0.5",
}


def sweep_form(rows: list[dict[str, str]] = ROWS, **overrides: str) -> dict[str, Any]:
    data = {k: v for k, v in form_data().items() if k != "name"}
    data.update({
        "display_name": "lr-sweep", "metric_id": "val_loss", "goal": "MINIMIZE",
        "algorithm": "RANDOM_SEARCH", "measurement_selection": "",
        "max_trial_count": "6", "parallel_trial_count": "2", "max_failed_trial_count": "1",
        "trial_hours": "0.5", "idempotency_key": "form-key-1", "action": "submit",
        "parameters-TOTAL_FORMS": str(len(rows)), "parameters-INITIAL_FORMS": "0",
    })
    for number, row in enumerate(rows):
        for name in ROW_FIELDS:
            data[f"parameters-{number}-{name}"] = row.get(name, "")
    data.update(overrides)
    return data


@pytest.fixture
def member_api(member: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(member)
    return client


def test_the_form_creates_the_sweep_the_api_creates(member_client: Client, member_api: APIClient,
                                                    tuning_backend: Any) -> None:
    response = member_client.post("/sweeps/compose/", sweep_form())
    assert response.status_code == 302, _errors(response)
    made = Sweep.objects.get()
    assert response["Location"] == f"/sweeps/{made.pk}/"
    # The trial job is the compose form's job request.
    trial = made.request["trial_job"]
    assert trial["args"] == ["--preset", "tiny", "--steps", "20"]
    assert trial["chief"]["machine_type"] == "n1-standard-4"

    via_api = member_api.post("/api/v1/sweeps/", {**API_STUDY, "trial_job": trial,
                                                  "team": "vision"}, format="json")
    assert via_api.status_code == 201, via_api.content
    twin = Sweep.objects.get(pk=via_api.json()["id"])
    assert made.request == twin.request
    assert made.tuning_job == twin.tuning_job
    spec = made.tuning_job["studySpec"]["parameters"]
    assert spec[0]["scaleType"] == "UNIT_LOG_SCALE"
    assert spec[1]["integerValueSpec"] == {"minValue": "0", "maxValue": "200"}
    assert spec[2]["conditionalParameterSpecs"][0]["parentCategoricalValues"] == {
        "values": ["sgd"]}
    for name in ("team_id", "region", "metric_id", "goal", "estimate_micros",
                 "trial_hourly_micros", "estimate_trial_hours", "state"):
        assert getattr(made, name) == getattr(twin, name), name
    assert made.estimate_micros > 0


def test_a_second_submission_of_the_page_finds_the_first_sweep(member_client: Client,
                                                                tuning_backend: Any) -> None:
    first = member_client.post("/sweeps/compose/", sweep_form())
    again = member_client.post("/sweeps/compose/", sweep_form())
    assert again.status_code == 302 and again["Location"] == first["Location"]
    assert Sweep.objects.count() == 1


def _errors(response: Any) -> str:
    return " | ".join(unescape(m) for m in re.findall(r"<li>(.*?)</li>",
                                                     response.content.decode()))


def _list(html: str, element_id: str) -> str:
    found = re.search(rf'id="{element_id}"[^>]*>(.*?)</ul>', html, re.S)
    assert found, f"no #{element_id}"
    return unescape(found.group(1))


def _row(number: int, **changes: str) -> list[dict[str, str]]:
    rows = [dict(r) for r in ROWS]
    rows[number].update(changes)
    return rows


@pytest.mark.parametrize(("data", "where", "message", "kept"), [
    (sweep_form(_row(0, min_value="0.1")), "errors-parameter-0",
     "Parameter 1, max: must be at least min_value (0.1)", 'value="0.1"'),
    (sweep_form(_row(2, values="")), "errors-parameter-2",
     "Parameter 3, values: give at least one value", 'value="optimizer"'),
    (sweep_form(parallel_trial_count="9"), "errors-parallel_trial_count",
     "at most max_trial_count (6)", 'value="9"'),
    (sweep_form(_row(3, parent="optimiser")), "errors-parameter-3",
     "Parameter 4, parent parameter: no parameter 'optimiser' in the table", 'value="optimiser"'),
    (sweep_form(_row(1, min_value="1.5")), "errors-parameter-1",
     "Parameter 2, min: '1.5' is not a whole number", 'value="1.5"'),
    (sweep_form(metric_id="val loss"), "errors-metric_id",
     "must be a name of letters", 'value="val loss"'),
    # The trial job's own rules, on the compose form's field.
    (sweep_form(chief_boot_disk_size_gb="5"), "errors-chief_boot_disk_size_gb", "GB",
     'value="5"'),
])
def test_bad_input_is_named_beside_its_field_and_creates_nothing(
        member_client: Client, tuning_backend: Any, data: dict[str, Any], where: str,
        message: str, kept: str) -> None:
    response = member_client.post("/sweeps/compose/", data)
    assert response.status_code == 400
    html = response.content.decode()
    assert message in _list(html, where)
    assert kept in html  # what the user typed is still there
    assert 'id="error-summary"' in html
    assert Sweep.objects.count() == 0


def test_the_preview_prices_the_whole_sweep_as_max_trials_times_one_job(
        member_client: Client, member_api: APIClient, tuning_backend: Any,
        team: Team) -> None:
    response = member_client.post("/sweeps/compose/", sweep_form(action="preview"))
    assert response.status_code == 200, _errors(response)
    assert Sweep.objects.count() == 0
    preview = response.context["estimate"]["sweep"]
    # The trial job alone, priced by the compose app's estimate endpoint for the same hours.
    job = member_api.post("/api/v1/jobs/estimate/", {
        "name": "one-trial", "chief": {"machine_type": "n1-standard-4"},
        "args": ["--preset", "tiny"],
        "hours": "0.5"}, format="json").json()
    assert job["total"]["on_demand"] > 0
    assert preview["total"]["on_demand"] == 6 * job["total"]["on_demand"]
    assert preview["parallel_hourly"]["on_demand"] == 2 * job["hourly"]["on_demand"]
    assert 'id="sweep-estimate-table"' in response.content.decode()
    # What is shown is what the sweep is recorded with.
    member_client.post("/sweeps/compose/", sweep_form())
    assert Sweep.objects.get().estimate_micros == preview["total"]["on_demand"]


def test_the_panel_refreshes_with_the_price_and_the_errors(member_client: Client) -> None:
    good = member_client.post("/sweeps/compose/validate/", sweep_form()).content.decode()
    assert 'id="sweep-estimate-table"' in good and "Valid" in good
    bad = member_client.post("/sweeps/compose/validate/",
                             sweep_form(parallel_trial_count="9")).content.decode()
    assert "at most max_trial_count (6)" in bad and 'hx-swap-oob="true"' in bad
    assert Sweep.objects.count() == 0


def test_clone_fills_the_form_with_the_sweeps_rows(member_client: Client,
                                                   tuning_backend: Any) -> None:
    member_client.post("/sweeps/compose/", sweep_form())
    made = Sweep.objects.get()
    page = member_client.get(f"/sweeps/compose/?from={made.pk}").content.decode()
    assert 'value="lr-sweep-clone"' in page
    assert 'name="parameters-3-parent" value="optimizer"' in page.replace(
        ' aria-label="Parent parameter"', "").replace(' maxlength="64"', "")
    assert 'value="--preset tiny --steps 20"' in page


def test_a_viewer_cannot_open_the_form(viewer_client: Client) -> None:
    assert viewer_client.get("/sweeps/compose/").status_code == 403
