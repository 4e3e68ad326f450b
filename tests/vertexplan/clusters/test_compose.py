"""Composing and checking a persistent resource (Ray on Vertex) from a cluster request."""

from __future__ import annotations

import pytest

from vertexplan.clusters import OFFERED, compose_persistent_resource

REGION = "us-central1"


def ray_cluster(**changes):
    request = {
        "resource_id": "ray-demo",
        "pools": [
            {"id": "head", "machine_type": "n1-standard-4"},
            {"id": "workers", "machine_type": "n1-standard-8", "replica_count": 2},
        ],
        "ray": {"version": "2.47.1"},
    }
    request.update(changes)
    return request


def paths(plan):
    return {e.path for e in plan.errors}


def test_ray_cluster_composes_to_vertex_rest_json():
    plan = compose_persistent_resource(ray_cluster(), REGION)
    assert plan.ok, plan.errors
    resource = plan.resource
    assert [p["id"] for p in resource["resourcePools"]] == ["head", "workers"]
    assert resource["resourcePools"][1]["replicaCount"] == "2"
    ray = resource["resourceRuntimeSpec"]["raySpec"]
    assert ray["imageUri"] == "us-docker.pkg.dev/vertex-ai/training/ray-cpu.2-47.py311:latest"
    assert ray["headNodeResourcePoolId"] == "head"


def test_gpu_pool_picks_the_gpu_image_and_the_regions_host():
    request = ray_cluster(pools=[
        {"id": "head", "machine_type": "n1-standard-4"},
        {"id": "gpus", "machine_type": "n1-standard-8", "accelerator_type": "NVIDIA_TESLA_T4",
         "accelerator_count": 1},
    ], ray={"version": "2.42.0", "python": "3.10"})
    plan = compose_persistent_resource(request, "europe-west4")
    assert plan.ok, plan.errors
    assert plan.resource["resourceRuntimeSpec"]["raySpec"]["imageUri"] == (
        "europe-docker.pkg.dev/vertex-ai/training/ray-gpu.2-42.py310:latest")


def test_ray_version_not_offered_is_a_field_error_naming_the_offered_ones():
    plan = compose_persistent_resource(ray_cluster(ray={"version": "2.9.3"}), REGION)
    assert plan.resource is None
    [error] = plan.errors
    assert error.path == "ray.version"
    for version in OFFERED:
        assert version in error.message


def test_python_the_versions_images_do_not_carry():
    plan = compose_persistent_resource(ray_cluster(ray={"version": "2.47.1", "python": "3.10"}),
                                       REGION)
    assert paths(plan) == {"ray.python"}


def test_head_pool_with_accelerators_its_machine_refuses():
    request = ray_cluster()
    request["pools"][0].update(accelerator_type="NVIDIA_TESLA_A100", accelerator_count=1)
    plan = compose_persistent_resource(request, REGION)
    assert paths(plan) == {"pools[0].accelerator_type"}
    assert "a2-highgpu-1g" in plan.errors[0].suggestions


def test_head_pool_on_tpu_is_refused():
    request = ray_cluster()
    request["pools"][0].update(machine_type="ct5lp-hightpu-4t")
    plan = compose_persistent_resource(request, REGION)
    assert "pools[0].machine_type" in paths(plan)


def test_head_pool_with_gpus_on_a_cpu_image_is_refused():
    request = ray_cluster(ray={"version": "2.47.1", "image_uri":
                               "us-docker.pkg.dev/vertex-ai/training/ray-cpu.2-47.py311:latest"})
    request["pools"][0].update(accelerator_type="NVIDIA_TESLA_T4", accelerator_count=1)
    plan = compose_persistent_resource(request, REGION)
    assert paths(plan) == {"pools[0].accelerator_type"}


def test_head_pool_has_one_replica_and_no_autoscaling():
    request = ray_cluster()
    request["pools"][0].update(replica_count=2)
    assert paths(compose_persistent_resource(request, REGION)) == {"pools[0].replica_count"}
    request["pools"][0].update(replica_count=1, min_replica_count=1, max_replica_count=3)
    assert paths(compose_persistent_resource(request, REGION)) == {"pools[0].min_replica_count"}


def test_head_pool_named_by_id():
    plan = compose_persistent_resource(ray_cluster(ray={"head_pool_id": "nope"}), REGION)
    assert paths(plan) == {"ray.head_pool_id"}
    request = ray_cluster(ray={"head_pool_id": "workers"})
    # the named head pool has two replicas: the head rules now apply to it
    assert paths(compose_persistent_resource(request, REGION)) == {"pools[1].replica_count"}


def test_autoscaling_to_zero_only_on_ray():
    pools = [{"id": "a", "machine_type": "n1-standard-4"},
             {"id": "b", "machine_type": "n1-standard-4", "replica_count": 0,
              "min_replica_count": 0, "max_replica_count": 3}]
    assert compose_persistent_resource(ray_cluster(pools=pools), REGION).ok
    plan = compose_persistent_resource(ray_cluster(pools=pools, ray=None), REGION)
    assert {"pools[1].min_replica_count", "pools[1].replica_count"} <= paths(plan)


def test_replica_count_within_bounds():
    request = ray_cluster()
    request["pools"][1].update(min_replica_count=1, max_replica_count=2, replica_count=5)
    assert paths(compose_persistent_resource(request, REGION)) == {"pools[1].replica_count"}
    request["pools"][1].update(min_replica_count=3, max_replica_count=2, replica_count=2)
    assert paths(compose_persistent_resource(request, REGION)) == {"pools[1].max_replica_count"}


@pytest.mark.parametrize("field,value", [
    ("resource_id", "Ray_Cluster"),
    ("resource_id", "a" * 64),
    ("resource_id", "x; rm -rf /"),
    ("network", "default"),
    ("service_account", "$(whoami)"),
])
def test_hostile_or_malformed_strings_are_refused(field, value):
    plan = compose_persistent_resource(ray_cluster(**{field: value}), REGION)
    assert plan.resource is None
    assert field in paths(plan)


def test_duplicate_pool_ids_and_missing_machine():
    pools = [{"id": "p", "machine_type": "n1-standard-4"}, {"id": "p", "machine_type": ""}]
    plan = compose_persistent_resource(ray_cluster(pools=pools), REGION)
    assert {"pools[1].id", "pools[1].machine_type"} <= paths(plan)


def test_no_pools_and_wrong_types():
    plan = compose_persistent_resource({"resource_id": "a", "pools": []}, REGION)
    assert "pools" in paths(plan)
    plan = compose_persistent_resource(ray_cluster(pools=[{"id": "a", "machine_type":
                                                           "n1-standard-4",
                                                           "replica_count": "two"}]), REGION)
    assert "pools[0].replica_count" in paths(plan)


def test_a_cluster_without_ray_has_no_ray_spec_but_keeps_service_account_and_network():
    plan = compose_persistent_resource(ray_cluster(
        ray=None, network="projects/123/global/networks/vpc-a",
        service_account="trainer@proj-1.iam.gserviceaccount.com"), REGION)
    assert plan.ok, plan.errors
    runtime = plan.resource["resourceRuntimeSpec"]
    assert "raySpec" not in runtime
    assert runtime["serviceAccountSpec"]["serviceAccount"] == (
        "trainer@proj-1.iam.gserviceaccount.com")
    assert plan.resource["network"] == "projects/123/global/networks/vpc-a"
