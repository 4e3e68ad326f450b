"""The region catalogue in validation: what a region does not offer is refused on the field that
asks for it, with the regions that do offer it; MIG partitions per GPU."""

from __future__ import annotations

import pytest

from vertexplan.catalog import offerings, validate_custom_job
from vertexplan.catalog.loader import read_rows

SPEC0 = "jobSpec.workerPoolSpecs[0].machineSpec"
H100 = {"machineType": "a3-highgpu-8g", "acceleratorType": "NVIDIA_H100_80GB",
        "acceleratorCount": 8}


def job(machine_spec: dict) -> dict:
    return {"displayName": "x", "jobSpec": {"workerPoolSpecs": [
        {"machineSpec": machine_spec, "replicaCount": "1",
         "containerSpec": {"imageUri": "gcr.io/p/i"}}]}}


def test_every_row_has_a_source_and_a_date() -> None:
    rows = list(read_rows("region_offerings.csv"))
    assert rows and all(r["source"] and r["retrieved"] for r in rows)


def test_h100_in_europe_north1_is_refused_with_the_regions_that_offer_it() -> None:
    [error] = validate_custom_job(job(H100), "europe-north1")
    assert error.path == f"{SPEC0}.acceleratorType"
    assert "europe-north1" in error.message and "us-central1" in error.message
    assert validate_custom_job(job(H100), "us-central1") == []


def test_tpu_v5e_in_southamerica_east1_is_refused_on_the_machine_type() -> None:
    spec = {"machineType": "ct5lp-hightpu-4t", "tpuTopology": "2x2"}
    [error] = validate_custom_job(job(spec), "southamerica-east1")
    assert error.path == f"{SPEC0}.machineType"
    assert "TPU v5e" in error.message and "europe-west4" in error.message
    assert validate_custom_job(job(spec), "us-west4") == []


def test_tpu_v5p_is_in_the_catalogue_where_cloud_tpu_has_it() -> None:
    spec = {"machineType": "ct5p-hightpu-4t", "tpuTopology": "2x2x2"}
    assert validate_custom_job(job(spec), "us-east5") == []
    assert "us-east5" in offerings.regions_offering("tpu-v5p")
    [error] = validate_custom_job(job(spec), "us-west1")
    assert "TPU v5p" in error.message


def test_a_region_outside_the_table_is_not_judged() -> None:
    assert offerings.offered("europe-west6", "NVIDIA_H100_80GB") is None
    assert validate_custom_job(job(H100), "europe-west6") == []


@pytest.mark.parametrize(("spec", "valid"), [
    ({**H100, "gpuPartitionSize": "1g.10gb"}, True),
    ({**H100, "gpuPartitionSize": "1g.5gb"}, False),
    ({"machineType": "n1-standard-8", "acceleratorType": "NVIDIA_TESLA_T4",
      "acceleratorCount": 1, "gpuPartitionSize": "1g.10gb"}, False),
])
def test_mig_partitions_per_gpu(spec: dict, valid: bool) -> None:
    errors = validate_custom_job(job(spec), "us-central1")
    assert (errors == []) is valid, errors
    if not valid:
        assert errors[0].path == f"{SPEC0}.gpuPartitionSize"
