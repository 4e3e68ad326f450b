from __future__ import annotations

from typing import Any

import pytest

from controlplane.compose.validation import nested
from tests.vertexplan.composer.helpers import compose_request
from vertexplan import composer


def request(**overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "exp", "strategy": "ddp",
        "chief": {"machine_type": "n1-standard-8", "accelerator_type": "NVIDIA_TESLA_T4",
                  "accelerator_count": 2},
    }
    base.update(overrides)
    return base


def test_single_pool_job_is_a_valid_custom_job() -> None:
    result = compose_request(request())
    assert result.ok, result.errors
    pools = result.custom_job["jobSpec"]["workerPoolSpecs"]
    assert len(pools) == 1
    assert pools[0]["machineSpec"] == {"machineType": "n1-standard-8",
                                       "acceleratorType": "NVIDIA_TESLA_T4",
                                       "acceleratorCount": 2}
    assert pools[0]["replicaCount"] == "1"
    assert pools[0]["containerSpec"]["command"] == ["python", "-m", "trainers.train"]
    assert pools[0]["containerSpec"]["args"][:2] == ["--strategy", "ddp"]
    assert result.world_size == 2
    # One replica: there are no other replicas to restart with it.
    assert result.custom_job["jobSpec"]["scheduling"] == {
        "strategy": "STANDARD", "restartJobOnWorkerRestart": False}


def test_workers_pool_inherits_the_chief_machine_and_spot_is_scheduling() -> None:
    result = compose_request(request(spot=True, workers={"replica_count": 3}))
    assert result.ok, result.errors
    chief, workers = result.custom_job["jobSpec"]["workerPoolSpecs"]
    assert workers["machineSpec"] == chief["machineSpec"]
    assert workers["replicaCount"] == "3"
    assert result.world_size == 8
    assert result.custom_job["jobSpec"]["scheduling"]["strategy"] == "SPOT"
    assert result.custom_job["jobSpec"]["scheduling"]["restartJobOnWorkerRestart"] is True


def test_own_command_is_kept_as_given() -> None:
    result = compose_request(request(command=["bash", "-c"], args=["echo hi"]))
    container = result.custom_job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    assert container["command"] == ["bash", "-c"] and container["args"] == ["echo hi"]


@pytest.mark.parametrize(("chief", "workers", "field"), [
    ({"machine_type": "n1-standard-4", "accelerator_type": "NVIDIA_TESLA_A100",
      "accelerator_count": 1}, None, "chief.accelerator_type"),
    ({"machine_type": "a2-highgpu-4g", "accelerator_type": "NVIDIA_TESLA_A100",
      "accelerator_count": 3}, None, "chief.accelerator_count"),
    ({"machine_type": "n1-standard-4"}, {"replica_count": 0}, "workers.replica_count"),
    ({"machine_type": "n1-standard-4", "boot_disk_size_gb": 50}, None,
     "chief.boot_disk_size_gb"),
])
def test_vertex_errors_come_back_on_the_request_field(chief: dict, workers: dict | None,
                                                      field: str) -> None:
    body = request(chief=chief)
    if workers is not None:
        body["workers"] = workers
    result = compose_request(body)
    assert not result.ok
    keys = set(result.errors)
    # An accelerator refused on a machine may be reported on its type or its count.
    if field.endswith("accelerator_type"):
        assert keys & {"chief.accelerator_type", "chief.accelerator_count"}, result.errors
    else:
        assert field in keys, result.errors


def test_a_workers_error_inherited_from_the_chief_is_reported_on_the_chief() -> None:
    body = request(chief={"machine_type": "a2-highgpu-4g", "accelerator_type":
                          "NVIDIA_TESLA_A100", "accelerator_count": 3},
                   workers={"replica_count": 2})
    result = compose_request(body)
    assert "chief.accelerator_count" in result.errors
    assert not any(k.startswith("workers.accelerator") for k in result.errors)


def test_for_attempt_sets_name_labels_and_output() -> None:
    base = compose_request(request()).custom_job
    job = composer.for_attempt(base, display_name="cp-7-a2", labels={"cp-job": "7"},
                               output_uri="gs://b/jobs/job-7")
    assert job["displayName"] == "cp-7-a2" and job["labels"] == {"cp-job": "7"}
    assert job["jobSpec"]["baseOutputDirectory"] == {"outputUriPrefix": "gs://b/jobs/job-7"}
    assert "baseOutputDirectory" not in base["jobSpec"], "the stored spec is not mutated"


def test_nested_errors() -> None:
    assert nested({"chief.accelerator_count": ["a"], "": ["b"], "name": ["c"]}) == {
        "chief": {"accelerator_count": ["a"]}, "non_field_errors": ["b"], "name": ["c"]}


def test_workers_on_their_own_machine_do_not_inherit_the_chief_accelerators() -> None:
    body = request(workers={"replica_count": 2, "machine_type": "n1-standard-4"})
    result = compose_request(body)
    assert result.ok, result.errors
    workers = result.custom_job["jobSpec"]["workerPoolSpecs"][1]
    assert workers["machineSpec"] == {"machineType": "n1-standard-4"}
    assert result.world_size == 2 + 2


def test_an_error_of_workers_on_their_own_machine_stays_on_the_workers() -> None:
    body = request(chief={"machine_type": "n1-standard-4"},
                   workers={"replica_count": 1, "machine_type": "a2-highgpu-1g"})
    result = compose_request(body)
    # The workers left the accelerator out: the error is keyed by the field they did give.
    assert any(k.startswith("workers.") for k in result.errors), result.errors
    assert "NVIDIA_TESLA_A100" in " ".join(m for ms in result.errors.values() for m in ms)
    assert not any(k.startswith("chief.") for k in result.errors), result.errors
