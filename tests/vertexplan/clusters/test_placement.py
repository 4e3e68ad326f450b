"""A CustomJob on a persistent resource fits its pools or says which pool does not."""

from vertexplan.clusters import compose_persistent_resource
from vertexplan.clusters.placement import job_fits

RESOURCE = compose_persistent_resource({"resource_id": "r", "pools": [
    {"id": "cpu", "machine_type": "n1-standard-4", "replica_count": 2},
    {"id": "gpu", "machine_type": "n1-standard-8", "accelerator_type": "NVIDIA_TESLA_T4",
     "accelerator_count": 1, "replica_count": 1, "min_replica_count": 1,
     "max_replica_count": 3},
]}, "us-central1").resource


def job(*pools):
    return {"jobSpec": {"persistentResourceId": "r", "workerPoolSpecs": list(pools)}}


def pool(machine, replicas, **accelerators):
    return {"machineSpec": {"machineType": machine, **accelerators}, "replicaCount": replicas}


T4 = {"acceleratorType": "NVIDIA_TESLA_T4", "acceleratorCount": 1}


def test_pools_that_match_a_resource_pool_fit_up_to_its_replicas_or_max():
    assert job_fits(job(pool("n1-standard-4", 1), pool("n1-standard-8", 3, **T4)),
                    RESOURCE) == []


def test_too_many_replicas_or_another_machine_do_not():
    [problem] = job_fits(job(pool("n1-standard-4", 1), pool("n1-standard-4", 3)), RESOURCE)
    assert "worker pool 1 asks for 3 replicas" in problem and "has 2" in problem
    [problem] = job_fits(job(pool("n1-standard-8", 1)), RESOURCE)
    assert "worker pool 0 (n1-standard-8) matches no pool" in problem
    assert "cpu: 2 x n1-standard-4" in problem


def test_disk_type_must_match_too():
    other_disk = {**pool("n1-standard-4", 1), "diskSpec": {"bootDiskType": "pd-standard"}}
    assert job_fits(job(other_disk), RESOURCE)
