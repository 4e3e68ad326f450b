"""POST /api/v1/jobs/estimate/ and the estimate section of validate: the same figures the
pure estimate gives, for the duration asked, per pool, with the price table's source and date;
400 naming the field and the valid values for a bad region or duration."""

from __future__ import annotations

import json
from decimal import Decimal as D
from typing import Any

from django.test import Client
from django.urls import reverse

from tests.vertexplan.pricing.factories import REDUCTION_SERVER, micros

T4_JOB = {"name": "t4", "chief": {"machine_type": "n1-standard-8",
                                  "accelerator_type": "NVIDIA_TESLA_T4", "accelerator_count": 2}}
# n1-standard-8 + 2 T4 + 100 GB pd-ssd in us-central1 (tests/vertexplan/pricing/test_hourly.py).
T4_HOURLY_ON_DEMAND = micros(D("0.4369977")) + micros(2 * D("0.4025")) + micros(
    D("0.195494") * 100 / 730)
T4_HOURLY_SPOT = micros(D("0.1910197")) + micros(2 * D("0.2275")) + micros(
    D("0.195494") * 100 / 730)


def post(client: Client, body: Any, name: str = "api-job-estimate") -> Any:
    return client.post(reverse(name), data=json.dumps(body), content_type="application/json")


def test_hours_give_the_total_and_per_pool_figures_at_every_rate(member_client: Client) -> None:
    response = post(member_client, {**T4_JOB, "region": "us-central1", "hours": 10})
    assert response.status_code == 200, response.content
    body = response.json()
    assert (T4_HOURLY_ON_DEMAND, T4_HOURLY_SPOT) == (1_268_778, 672_800)
    assert body["hourly"] == {"on_demand": 1_268_778, "spot": 672_800, "flex": None}
    assert body["total"] == {"on_demand": 12_687_780, "spot": 6_728_000, "flex": None}
    assert body["duration"] == {"basis": "hours", "hours": "10", "steps": None,
                                "step_time_s": None}
    [chief] = body["pools"]
    assert chief["role"] == "chief" and chief["total"] == body["total"]
    assert [(r["resource"], r["name"], r["quantity"]) for r in chief["resources"]] == [
        ("machine", "n1-standard-8", 1), ("accelerator", "NVIDIA_TESLA_T4", 2),
        ("disk", "pd-ssd", 100)]
    assert chief["resources"][1]["total"]["on_demand"] == 2 * 402_500 * 10
    table = body["price_table"]
    assert table["retrieved"] >= "2025" and "price table" in table["source"]
    assert body["region"] == "us-central1" and body["rate"] == "on_demand"
    assert body["money"].startswith("integer micro-dollars")


def test_steps_times_step_time_and_a_custom_job_with_a_reduction_server(
        member_client: Client) -> None:
    a2 = {"machineSpec": {"machineType": "a2-highgpu-8g",
                          "acceleratorType": "NVIDIA_TESLA_A100", "acceleratorCount": 8},
          "replicaCount": "1", "containerSpec": {"imageUri": "us-docker.pkg.dev/p/t/x:1"}}
    custom_job = {"displayName": "rs", "jobSpec": {"workerPoolSpecs": [
        a2, {**a2, "replicaCount": "3"},
        {"machineSpec": {"machineType": "n1-highcpu-16"}, "replicaCount": "2",
         "containerSpec": {"imageUri": REDUCTION_SERVER}}]}}
    response = post(member_client, {**custom_job, "region": "us-central1", "steps": 1800,
                                     "step_time_s": "2"})
    assert response.status_code == 200, response.content
    body = response.json()
    # 1800 steps x 2 s = one hour: the totals are the hourly figures of test_hourly.py.
    assert body["duration"]["basis"] == "steps" and body["duration"]["hours"] == "1"
    assert body["total"] == {"on_demand": 136_648_131, "spot": 80_059_432, "flex": None}
    assert [p["role"] for p in body["pools"]] == ["chief", "workers", "reduction server"]
    assert body["pools"][2]["total"]["on_demand"] == 1_303_614 + 53_560
    # FLEX_START applies to the A100 pools, not to the Reduction Server's CPU pool.
    assert body["pools"][0]["total"]["flex"] is None  # no published FLEX_START rate
    assert body["pools"][2]["total"]["flex"] is None


def test_bad_region_and_durations_are_400_naming_the_field_and_valid_values(
        member_client: Client) -> None:
    response = post(member_client, {**T4_JOB, "region": "mars-north1", "hours": 1})
    assert response.status_code == 400
    [message] = response.json()["region"]
    assert "'mars-north1'" in message and "us-central1" in message
    assert "europe-west4" in message and "asia-southeast1" in message
    for bad in (0, -2, "ten", True, 10**6):
        response = post(member_client, {**T4_JOB, "hours": bad})
        assert response.status_code == 400, bad
        assert "greater than 0" in response.json()["hours"][0]
    response = post(member_client, {**T4_JOB, "steps": 100})
    assert response.status_code == 400 and "step_time_s" in response.json()
    response = post(member_client, {**T4_JOB, "steps": "1.5", "step_time_s": 1})
    assert response.status_code == 400 and "whole number" in response.json()["steps"][0]
    response = post(member_client, {**T4_JOB, "hours": 1, "steps": 2, "step_time_s": 1})
    assert response.status_code == 400 and "not both" in response.json()["hours"][0]


def test_an_invalid_job_is_400_with_its_field_errors(member_client: Client) -> None:
    body = {"name": "bad", "chief": {"machine_type": "a2-highgpu-4g",
                                     "accelerator_type": "NVIDIA_TESLA_A100",
                                     "accelerator_count": 3}, "hours": 1}
    response = post(member_client, body)
    assert response.status_code == 400
    assert any("accelerator_count" in key for key in response.json())


def test_without_a_duration_the_timeout_and_validate_carries_the_same_estimate(
        member_client: Client) -> None:
    body = {**T4_JOB, "timeout_hours": 3, "scheduling_strategy": "SPOT"}
    estimate = post(member_client, body).json()
    assert estimate["duration"]["basis"] == "timeout" and estimate["duration"]["hours"] == "3"
    assert estimate["total"]["spot"] == 3 * 672_800 and estimate["rate"] == "spot"
    assert estimate["duration"]["label"].startswith("ceiling: the job's timeout")
    validated = post(member_client, body, "api-job-validate").json()
    assert validated["valid"] is True
    ceiling = validated["estimate"].pop("ceiling")
    # The estimate endpoint also says whether the quota allows the job ("quota").
    assert validated["estimate"] == {k: v for k, v in estimate.items() if k != "quota"}
    assert ceiling["basis"] == "timeout" and ceiling["total"] == estimate["total"]
    # Vertex's own limit when the job sets no timeout: 7 days.
    week = post(member_client, T4_JOB).json()
    assert week["duration"]["hours"] == "168"
    assert week["total"]["on_demand"] == 168 * 1_268_778


def test_validate_says_why_a_job_cannot_be_priced(member_client: Client) -> None:
    body = {**T4_JOB, "region": "us-west2"}  # a Vertex region the price table does not cover
    validated = post(member_client, body, "api-job-validate").json()
    if validated["valid"]:
        assert "no price" in validated["estimate"]["error"]
        assert "us-central1" in validated["estimate"]["error"]
    response = post(member_client, {**body, "hours": 1})
    assert response.status_code == 400
    assert "us-central1" in " ".join(response.json()["region"])


def test_validate_expects_steps_times_the_step_time_measured_on_the_same_job(
        member_client: Client, member: Any, team: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from controlplane.runs.models import Job, JobState

    body = {**T4_JOB, "args": ["--preset", "tiny", "--steps", "600"], "timeout_hours": 168}
    first = post(member_client, body, "api-job-validate").json()
    assert first["estimate"]["duration"]["basis"] == "timeout"  # nothing measured yet
    ended = timezone.now()
    Job.objects.create(team=team, created_by=member, name="earlier", request=body,
                       custom_job=first["custom_job"], project="p", region="us-central1",
                       state=JobState.SUCCEEDED, started_at=ended - timedelta(seconds=150),
                       ended_at=ended, last_step=300)
    estimate = post(member_client, body, "api-job-validate").json()["estimate"]
    # 600 steps x the 0.5 s a step took on the same machines: 300 s, not the 7-day timeout.
    assert estimate["duration"] == {"basis": "steps", "hours": "0.083333", "steps": 600,
                                    "step_time_s": "0.5"}
    assert estimate["total"]["on_demand"] == (1_268_778 * 300 + 1800) // 3600
    assert estimate["ceiling"]["hours"] == "168"
    assert estimate["ceiling"]["total"]["on_demand"] == 168 * 1_268_778


def test_a_region_priced_from_compute_engine_list_prices_estimates_with_source_and_date(
    member_client: Client,
) -> None:
    cpu_job = {"name": "cpu", "chief": {"machine_type": "n1-standard-8"}}
    response = post(member_client, {**cpu_job, "region": "europe-west1", "hours": 2})
    assert response.status_code == 200, response.content
    body = response.json()
    # n1-standard-8 = 1.15 x CE 0.418014; default 100 GB pd-ssd = 1.15 x CE 0.17 per GB-month.
    hourly = micros(D("0.4807161")) + micros(D("0.1955") * 100 / 730)
    assert body["region"] == "europe-west1"
    assert body["hourly"]["on_demand"] == hourly and body["total"]["on_demand"] == 2 * hourly
    machine, disk = body["pools"][0]["resources"]
    assert (machine["name"], disk["name"]) == ("n1-standard-8", "pd-ssd")
    assert machine["source"].startswith("DERIVED: 1.15 x (CE on-demand 0.418014) [github:")
    assert disk["source"].startswith("DERIVED: 1.15 x CE pd-ssd 0.17 [github:")
    assert machine["retrieved"] == disk["retrieved"] == "2026-07-30"


def test_validate_models_the_step_time_from_the_model_until_one_is_measured(
        member_client: Client, member: Any, team: Any) -> None:
    from datetime import timedelta

    from django.utils import timezone

    from controlplane.runs.models import Job, JobState

    body = {"name": "lm", "strategy": "ddp", "precision": "bf16",
            "chief": {"machine_type": "a2-highgpu-1g", "accelerator_type": "NVIDIA_TESLA_A100",
                      "accelerator_count": 1},
            "batch": {"global_batch_size": 8},
            "model": {"parameters": 125_000_000, "layers": 12, "hidden_size": 768,
                      "sequence_length": 1024},
            "args": ["--steps", "2000"], "timeout_hours": 24}
    validated = post(member_client, body, "api-job-validate").json()
    assert validated["valid"] is True, validated["errors"]
    duration = validated["estimate"]["duration"]
    # 8 x 1024 tokens x (6 x 125M + 12 x 12 x 768 x 1024) FLOPs over 312 TFLOP/s at 40%.
    flops = 8 * 1024 * (6 * 125_000_000 + 12 * 12 * 768 * 1024)
    step_s = D(flops) / D(312e12 * 0.4)
    assert duration["basis"] == "expected" and duration["steps"] == 2000
    assert duration["step_time_s"] == str(step_s.quantize(D("0.001")))
    assert duration["label"].startswith(f"expected: 2000 steps x a {duration['step_time_s']} s "
                                        "step, modelled, not measured: ")
    assert validated["estimate"]["ceiling"]["hours"] == "24"  # the timeout stays the ceiling
    hours = 2000 * step_s.quantize(D("0.001")) / 3600
    assert D(duration["hours"]) == hours.quantize(D("0.000001"))

    # A measured step of the same job shape wins over the model.
    ended = timezone.now()
    Job.objects.create(team=team, created_by=member, name="earlier", request=body,
                       custom_job=validated["custom_job"], project="p", region="us-central1",
                       state=JobState.SUCCEEDED, started_at=ended - timedelta(seconds=60),
                       ended_at=ended, last_step=2000)
    measured = post(member_client, body, "api-job-validate").json()["estimate"]["duration"]
    assert (measured["basis"], measured["step_time_s"]) == ("steps", "0.03")
