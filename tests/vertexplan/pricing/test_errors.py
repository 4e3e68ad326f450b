"""A job that cannot be priced says which resource, where, and where it does have a price."""

from __future__ import annotations

import pytest

from tests.vertexplan.pricing.factories import job, pool
from vertexplan.catalog.offerings import regions_with_offerings
from vertexplan.pricing.job_estimate import PricingError, hourly

N1_T4 = job(pool("n1-standard-8", "NVIDIA_TESLA_T4", 2, disk=("pd-ssd", 100)))
PRICED_REGIONS = ("asia-southeast1", "europe-west4", "us-central1")


def problems(spec, region):
    with pytest.raises(PricingError) as caught:
        hourly(spec, region)
    return caught.value.problems


def test_a_region_without_prices_names_every_resource_and_where_it_is_priced():
    found = problems(N1_T4, "us-west2")
    assert found[0].message.startswith("the price table has no prices for us-west2")
    by_resource = {p.resource: p for p in found[1:]}
    assert set(by_resource) == {"machine", "accelerator", "disk"}
    machine = by_resource["machine"]
    assert (machine.name, machine.region, machine.pool) == ("n1-standard-8", "us-west2", 0)
    # N1 is offered, and priced, in every region of the region catalogue.
    assert machine.priced_in == tuple(sorted(regions_with_offerings()))
    assert str(machine) == (
        "workerPoolSpecs[0]: no price for machine n1-standard-8 in us-west2; "
        f"priced in {', '.join(sorted(regions_with_offerings()))}"
    )


def test_one_missing_resource_in_a_priced_region():
    spec = job(pool("n1-standard-8", "NVIDIA_TESLA_V100", 1))
    (problem,) = problems(spec, "asia-southeast1")
    assert problem.name == "NVIDIA_TESLA_V100"
    # Every catalogue region that offers V100 prices it; asia-southeast1 does not offer it.
    assert problem.priced_in == (
        "asia-east1",
        "europe-west4",
        "us-central1",
        "us-east1",
        "us-west1",
    )
    assert "no price for accelerator NVIDIA_TESLA_V100 in asia-southeast1" in str(problem)


def test_a_catalogue_machine_that_no_region_prices():
    (problem,) = problems(job(pool("a3-highgpu-4g", "NVIDIA_H100_80GB", 4)), "us-central1")
    assert problem.priced_in == ()
    assert str(problem).endswith(
        "no price for machine a3-highgpu-4g in us-central1; no region in the price table has one"
    )


def test_a_row_without_a_figure_is_not_a_price():
    spec = job(pool("n1-standard-4", disk=("hyperdisk-balanced", 200)))
    (problem,) = problems(spec, "europe-west4")
    assert problem.resource == "disk"
    assert "lists it without a figure" in problem.message
    assert problem.priced_in == ("us-central1",)


def test_pd_balanced_is_not_a_vertex_boot_disk_even_though_the_table_lists_a_price():
    (problem,) = problems(job(pool("n1-standard-4", disk=("pd-balanced", 100))), "us-central1")
    assert "pd-balanced" in problem.message
    assert "pd-ssd, pd-standard or hyperdisk-balanced" in problem.message


def test_unknown_machine_and_unknown_region():
    (problem,) = problems(job(pool("n1-standard-7")), "us-central1")
    assert "unknown machineType 'n1-standard-7'" in str(problem)
    (problem,) = problems(N1_T4, "us-centrall1")
    assert "unknown region 'us-centrall1'" in str(problem)
    assert "us-central1" in str(problem)


def test_every_problem_is_listed_at_once():
    spec = job(
        pool("a3-ultragpu-8g", "NVIDIA_H200_141GB", 8),
        pool("n1-standard-8", replicas="many"),
        pool("ct6e-standard-4t", topology="3x3"),
    )
    found = problems(spec, "us-central1")
    assert [p.pool for p in found] == [0, 1, 2]
    assert "no price for machine a3-ultragpu-8g in us-central1" in str(found[0])
    assert "replicaCount 'many'" in str(found[1])
    assert "tpuTopology" in str(found[2])


def test_bad_scheduling_strategy_and_missing_pools():
    spec = job(pool("n1-standard-4"), strategy="CHEAPEST")
    assert "strategy 'CHEAPEST'" in str(problems(spec, "us-central1")[0])
    assert "workerPoolSpecs" in str(problems({"jobSpec": {}}, "us-central1")[0])
