"""The schema documents what the server answers (controlplane.core.openapi), and the server
answers what the schema says for the cases schemathesis first found it did not."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from rest_framework import serializers
from rest_framework.test import APIClient

from tests.security.conftest import World


@pytest.fixture
def schema(client: Client, db: None) -> dict[str, Any]:
    return client.get("/api/schema/?format=json").json()


def test_refusals_are_documented_with_their_bodies(schema: dict[str, Any]) -> None:
    listing = schema["paths"]["/api/v1/jobs/"]["get"]["responses"]
    assert listing["400"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/FieldErrors"}
    for code in ("401", "403", "429"):
        assert listing[code]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Detail"}
    detail = schema["paths"]["/api/v1/jobs/{id}/"]["get"]["responses"]
    assert "404" in detail
    assert "409" in schema["paths"]["/api/v1/jobs/{id}/cancel/"]["post"]["responses"]


def test_strict_bodies_refuse_unknown_keys_in_the_schema_too(schema: dict[str, Any]) -> None:
    components = schema["components"]["schemas"]
    assert components["JobRequestRequest"]["additionalProperties"] is False
    assert components["PoolRequest"]["additionalProperties"] is False
    assert components["EstimateRequestRequest"]["additionalProperties"] is False
    body = schema["paths"]["/api/v1/jobs/"]["post"]["requestBody"]
    assert body["required"] is True
    assert list(body["content"]) == ["application/json"]  # the API reads JSON only


def test_paging_is_documented_as_served(schema: dict[str, Any]) -> None:
    parameters = {p["name"]: p for p in schema["paths"]["/api/v1/jobs/"]["get"]["parameters"]}
    assert parameters["limit"]["schema"]["minimum"] == 1
    assert parameters["offset"]["schema"]["minimum"] == 0


def test_validate_without_a_job_is_a_400(world: World,
                                         token_client: Callable[[Any], APIClient]) -> None:
    api = token_client(world.users["member"])
    assert api.post("/api/v1/jobs/validate/").status_code == 400
    assert api.post("/api/v1/jobs/validate/", [1], format="json").status_code == 400
    typo = api.post("/api/v1/jobs/validate/", {"name": "x", "chief": {"machine_typ": "n1"}},
                    format="json")
    assert typo.status_code == 400 and "machine_typ" in typo.json()["chief"]
    # A job Vertex would refuse is an answer, with the reason.
    refused = api.post("/api/v1/jobs/validate/", {"name": "x", "chief": {
        "machine_type": "a2-highgpu-4g", "accelerator_type": "NVIDIA_TESLA_A100",
        "accelerator_count": 3}}, format="json")
    assert refused.status_code == 200 and refused.json()["valid"] is False


@pytest.mark.parametrize("value", [0, 1, "true", "yes", "on"])
def test_api_booleans_are_json_booleans(value: Any) -> None:
    field = serializers.BooleanField()
    with pytest.raises(serializers.ValidationError):
        field.run_validation(value)
    assert field.run_validation(True) is True and field.run_validation(False) is False


@pytest.mark.parametrize("field", [serializers.IntegerField(), serializers.FloatField(),
                                   serializers.DecimalField(max_digits=5, decimal_places=2)])
def test_api_numbers_are_not_booleans(field: serializers.Field) -> None:
    for value in (True, False):
        with pytest.raises(serializers.ValidationError):
            field.run_validation(value)
    assert field.run_validation(1) == 1
