"""A persistent resource's hourly cost: every provisioned node, busy or not."""

from __future__ import annotations

from vertexplan.clusters import compose_persistent_resource, hourly_cost
from vertexplan.pricing import default_table

REGION = "us-central1"


def machine_hourly(name: str) -> int:
    from vertexplan.pricing import usd_to_micros
    return usd_to_micros(default_table().price("machine", name, REGION).on_demand)


def resource(pools):
    plan = compose_persistent_resource({"resource_id": "c", "pools": pools, "ray": {}}, REGION)
    assert plan.ok, plan.errors
    return plan.resource


def test_cost_counts_every_replica_of_every_pool_with_disks():
    cost = hourly_cost(resource([
        {"id": "head", "machine_type": "n1-standard-4"},
        {"id": "w", "machine_type": "n1-standard-8", "replica_count": 2},
    ]), REGION)
    machines = machine_hourly("n1-standard-4") + 2 * machine_hourly("n1-standard-8")
    # the rest is three 100 GB boot disks
    assert machines < cost.hourly_micros < machines + 100_000
    assert cost.min_hourly_micros == cost.hourly_micros == cost.max_hourly_micros
    assert "whether or not a job runs" in cost.note
    assert cost.estimate.table_source


def test_autoscaled_pool_has_floor_and_ceiling():
    cost = hourly_cost(resource([
        {"id": "head", "machine_type": "n1-standard-4"},
        {"id": "w", "machine_type": "n1-standard-8", "replica_count": 1,
         "min_replica_count": 0, "max_replica_count": 3},
    ]), REGION)
    one_worker = machine_hourly("n1-standard-8")
    assert cost.min_hourly_micros < cost.hourly_micros < cost.max_hourly_micros
    assert cost.hourly_micros - cost.min_hourly_micros > one_worker
    assert cost.max_hourly_micros - cost.hourly_micros > 2 * one_worker


def test_gpus_billed_apart_on_n1():
    plain = hourly_cost(resource([{"id": "h", "machine_type": "n1-standard-8"}]), REGION)
    gpu = hourly_cost(resource([{"id": "h", "machine_type": "n1-standard-8",
                                 "accelerator_type": "NVIDIA_TESLA_T4",
                                 "accelerator_count": 1}]), REGION)
    t4 = default_table().price("accelerator", "NVIDIA_TESLA_T4", REGION).on_demand
    from vertexplan.pricing import usd_to_micros
    assert gpu.hourly_micros - plain.hourly_micros == usd_to_micros(t4)
