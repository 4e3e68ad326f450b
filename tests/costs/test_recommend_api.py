"""POST /api/v1/jobs/recommend/, the recommender page and its "Use this" links into the compose
form, and the TPU/GPU alternatives in the estimate."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.backends.base import Backend
from tests.compose.test_pages import post_data
from tests.runs.pages.conftest import viewer  # noqa: F401
from tests.vertexplan.composer.helpers import compose_request
from vertexplan.pricing import default_table

BODY = {"parameters": 7_000_000_000, "precision": "bf16", "strategy": "any",
        "region": "us-central1", "hours": 10}


def post(client: Client, body: Any, name: str = "api-job-recommend") -> Any:
    return client.post(reverse(name), data=json.dumps(body), content_type="application/json")


def test_the_answer_ranks_configurations_with_costs_memory_and_the_price_date(
        member_client: Client) -> None:
    response = post(member_client, {**BODY, "limit": 5})
    assert response.status_code == 200, response.content
    body = response.json()
    results = body["results"]
    assert 1 <= len(results) <= 5 and body["reason"] == ""
    assert [r["cost"] for r in results] == sorted(r["cost"] for r in results)
    table = default_table()
    assert body["price_table"] == {"source": table.source, "retrieved": table.newest_retrieved}
    assert body["money"].startswith("integer micro-dollars")
    for result in results:
        assert isinstance(result["cost"], int)
        assert set(result["costs"]) == {"on_demand", "spot", "flex"}
        assert result["cost"] == result["costs"][result["rate"]]
        memory = result["memory"]
        assert memory["fits"] is True
        assert memory["per_device_gib"] <= memory["device_memory_gib"]
        assert compose_request(result["request"]).ok
        assert urlsplit(result["compose_url"]).path == reverse("job-compose")


def test_the_default_is_ten_results(member_client: Client) -> None:
    assert len(post(member_client, BODY).json()["results"]) == 10


def test_nothing_fits_is_a_200_with_the_reason(member_client: Client) -> None:
    body = post(member_client, {**BODY, "parameters": 2_000_000_000_000,
                                "strategy": "ddp"}).json()
    assert body["results"] == [] and "do not fit" in body["reason"]


@pytest.mark.parametrize(("change", "field", "names"), [
    ({"region": "mars-central1"}, "region", ["us-central1", "europe-west4"]),
    ({"strategy": "megatron"}, "strategy", ["any", "zero3", "tpu_jax"]),
    ({"precision": "int4"}, "precision", ["fp32", "bf16", "fp16"]),
    ({"schedules": ["PREEMPTIBLE"]}, "schedules", ["STANDARD", "SPOT", "FLEX_START"]),
    ({"hours": 0}, "hours", []),
    ({"parameters": 0}, "parameters", []),
    ({"max_nodes": 1000}, "max_nodes", []),
    ({"reference_device": "NVIDIA_TESLA_K80", "steps": 10, "step_time_s": 1, "hours": None},
     "reference_device", ["NVIDIA_TESLA_A100", "TPU v6e"]),
    ({"steps": 100}, "hours", []),
    ({"hours": None, "steps": 100}, "step_time_s", []),
    ({"speed": "fast"}, "speed", ["parameters", "region"]),
])
def test_a_bad_body_is_a_400_keyed_by_the_field_naming_the_valid_values(
        member_client: Client, change: dict[str, Any], field: str, names: list[str]) -> None:
    body = {k: v for k, v in {**BODY, **change}.items() if v is not None}
    response = post(member_client, body)
    assert response.status_code == 400, response.content
    errors = response.json()
    assert field in errors, errors
    text = json.dumps(errors[field])
    for name in names:
        assert name in text


def test_the_endpoint_needs_a_login() -> None:
    assert post(Client(), BODY).status_code in (401, 403)


def test_the_estimate_shows_the_same_job_on_tpu_beside_a_gpu_job(
        member_client: Client) -> None:
    job = {"name": "a100", "strategy": "zero3", "precision": "bf16",
           "model": {"parameters": 7_000_000_000},
           "chief": {"machine_type": "a2-highgpu-8g", "accelerator_type": "NVIDIA_TESLA_A100",
                     "accelerator_count": 8}}
    body = post(member_client, {**job, "region": "us-central1", "hours": 10},
                "api-job-estimate").json()
    alternatives = body["alternatives"]
    assert alternatives and "built-in JAX trainer" in body["alternatives_basis"]
    for alt in alternatives:
        assert alt["tpu_topology"] and alt["strategy"] == "tpu_jax"
        assert set(alt["costs"]) == {"on_demand", "spot", "flex"}
        assert compose_request(alt["request"]).ok
    cpu = post(member_client, {"name": "cpu", "chief": {"machine_type": "n1-standard-4"},
                               "region": "us-central1", "hours": 1}, "api-job-estimate").json()
    assert cpu["alternatives"] == []


# -- the page -----------------------------------------------------------------------------------

PAGE = {"parameters_b": "7", "precision": "bf16", "strategy": "any", "region": "europe-west4",
        "hours": "10", "max_nodes": "4", "schedules": ["STANDARD", "SPOT"]}


def test_the_compose_page_links_to_the_recommender(member_client: Client,
                                                   backend: Backend) -> None:
    html = member_client.get(reverse("job-compose")).content.decode()
    assert f'href="{reverse("job-recommend")}"' in html


def test_the_page_ranks_and_use_this_opens_the_form_prefilled(member_client: Client,
                                                               backend: Backend) -> None:
    page = member_client.get(reverse("job-recommend"), PAGE)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="recommend-table"' in html and "Use this" in html
    answer = page.context["answer"]
    first = answer["results"][0]
    assert first["scheduling_strategy"] in ("STANDARD", "SPOT")
    assert f'href="{first["compose_url"].replace("&", "&amp;")}"' in html.replace("&#x27;", "'")

    form_page = member_client.get(first["compose_url"])
    assert form_page.status_code == 200
    assert 'id="from-recommendation"' in form_page.content.decode()
    form = form_page.context["form"]
    request = first["request"]
    chief = request["chief"]
    assert form.initial["chief_machine_type"] == chief["machine_type"]
    assert form.initial["chief_accelerator_type"] == chief["accelerator_type"]
    assert form.initial["chief_accelerator_count"] == chief["accelerator_count"]
    assert form.initial["strategy"] == request["strategy"]
    assert form.initial["scheduling_strategy"] == request["scheduling_strategy"]
    assert form.initial["model_parameters_b"] == 7
    assert form.initial["precision"] == "bf16"
    assert bool(form.initial.get("workers_enabled")) == ("workers" in request)
    assert form.initial["region"] == "europe-west4"  # the form's region field holds it

    # Posted back as shown, it is the recommended job.
    checked = member_client.post(reverse("job-validate"), post_data(form)).context["checked"]
    assert checked is not None and checked.ok, checked.errors
    assert checked.request.region == "europe-west4"
    assert checked.composition.custom_job == compose_request(request).custom_job


def test_the_page_says_why_when_nothing_fits(member_client: Client) -> None:
    page = member_client.get(reverse("job-recommend"),
                             {**PAGE, "parameters_b": "2000", "strategy": "ddp"})
    assert page.status_code == 200
    assert 'id="recommend-reason"' in page.content.decode()


def test_the_page_shows_errors_on_its_fields(member_client: Client) -> None:
    page = member_client.get(reverse("job-recommend"), {**PAGE, "parameters_b": "seven",
                                                        "hours": ""})
    assert page.status_code == 400
    assert "parameters in billions" in page.content.decode()
    page = member_client.get(reverse("job-recommend"), {**PAGE, "hours": "", "steps": "10"})
    assert page.status_code == 400
    assert "step_time_s" in page.context["errors"]


def test_the_form_refuses_a_recommended_value_that_is_not_a_request(
        member_client: Client, backend: Backend) -> None:
    response = member_client.get(reverse("job-compose"), {"recommended": "[1, 2]"})
    assert response.status_code == 400


def test_a_viewer_who_cannot_submit_anywhere_is_refused(viewer: Any) -> None:  # noqa: F811
    client = Client()
    client.force_login(viewer)
    assert post(client, BODY).status_code == 403


def test_the_compose_panel_shows_the_tpu_alternative_beside_the_estimate(
        member_client: Client, backend: Backend) -> None:
    from tests.compose.test_pages import shown_then_posted

    data = shown_then_posted(member_client, reverse("job-compose"),
                             preset="single-node-fsdp-a100")
    html = member_client.post(reverse("job-validate"),
                              {**data, "estimate_hours": "10"}).content.decode()
    assert 'id="estimate-table"' in html and 'id="estimate-alternatives"' in html
    assert "The same work on TPU instead" in html and "tpu_jax" in html
