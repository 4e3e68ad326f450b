"""Which hosts a JAX run spans, from the environment Vertex (or the emulator) gives a VM."""

from __future__ import annotations

import json

import pytest

from trainers.jax.hosts import COORDINATOR_PORT, host_plan, tpu_vms
from trainers.job.cluster import ClusterError, NotATrainer

pytestmark = pytest.mark.trainers


def cluster_spec(pools: dict[str, list[str]], task: str, index: int, **machine: str) -> str:
    job = {"worker_pool_specs": [{"machine_spec": machine, "replica_count": 1}]}
    return json.dumps({"cluster": pools, "task": {"type": task, "index": index}, "job": job,
                       "environment": "cloud"})


def test_nothing_said_is_one_host_without_initialisation():
    plan = host_plan({})
    assert plan.kind == "single" and plan.initialize_kwargs() == {}


def test_explicit_jax_variables_win():
    env = {"JAX_COORDINATOR_ADDRESS": "10.0.0.2:1234", "JAX_NUM_PROCESSES": "4",
           "JAX_PROCESS_ID": "3", "TPU_WORKER_HOSTNAMES": "a,b", "TPU_WORKER_ID": "0"}
    assert host_plan(env).initialize_kwargs() == {
        "coordinator_address": "10.0.0.2:1234", "num_processes": 4, "process_id": 3}


def test_tpu_worker_hostnames_make_the_first_host_the_coordinator():
    plan = host_plan({"TPU_WORKER_HOSTNAMES": "t1k-w-0, t1k-w-1", "TPU_WORKER_ID": "1"})
    assert plan.initialize_kwargs() == {
        "coordinator_address": f"t1k-w-0:{COORDINATOR_PORT}", "num_processes": 2,
        "process_id": 1}
    one = host_plan({"TPU_WORKER_HOSTNAMES": "only-host", "TPU_WORKER_ID": "0"})
    assert one.kind == "single"


def test_several_replicas_in_cluster_spec_are_the_hosts():
    spec = cluster_spec({"workerpool0": ["chief:2222"], "workerpool1": ["w0:2222", "w1:2222"]},
                        "workerpool1", 1)
    assert host_plan({"CLUSTER_SPEC": spec}).initialize_kwargs() == {
        "coordinator_address": f"chief:{COORDINATOR_PORT}", "num_processes": 3, "process_id": 2}


def test_a_multi_vm_topology_with_one_replica_asks_jax_to_find_the_hosts():
    spec = cluster_spec({"workerpool0": ["host:2222"]}, "workerpool0", 0,
                        machine_type="ct5lp-hightpu-4t", tpu_topology="4x4")
    plan = host_plan({"CLUSTER_SPEC": spec})
    assert (plan.kind, plan.num_processes) == ("auto", 4)
    assert plan.initialize_kwargs() == {}  # jax.distributed.initialize() detects the rest


@pytest.mark.parametrize(("machine_type", "topology", "vms"), [
    ("ct5lp-hightpu-4t", "2x2", 1),
    ("ct5lp-hightpu-4t", "2x4", 2),
    ("ct5lp-hightpu-8t", "2x4", 1),
    ("ct6e-standard-4t", "16x16", 64),
    ("n1-standard-8", "", 1),
])
def test_tpu_vms_follow_chips_per_vm(machine_type, topology, vms):
    spec = {"job": {"worker_pool_specs": [
        {"machine_spec": {"machine_type": machine_type, "tpu_topology": topology}}]}}
    assert tpu_vms(spec) == vms


def test_inconsistent_variables_are_configuration_errors():
    with pytest.raises(ClusterError, match="JAX_PROCESS_ID"):
        host_plan({"JAX_COORDINATOR_ADDRESS": "h:1", "JAX_NUM_PROCESSES": "2"})
    with pytest.raises(ClusterError, match="outside"):
        host_plan({"TPU_WORKER_HOSTNAMES": "a,b", "TPU_WORKER_ID": "2"})


def test_a_reduction_server_replica_runs_no_trainer():
    spec = cluster_spec({"workerpool0": ["c:2222"], "workerpool2": ["r:2222"]}, "workerpool2", 0)
    with pytest.raises(NotATrainer):
        host_plan({"CLUSTER_SPEC": spec})


def test_one_named_tpu_host_wins_over_a_multi_vm_topology():
    # The emulator runs a whole slice as one host: no jax.distributed to wait for.
    spec = cluster_spec({"workerpool0": ["host:2222"]}, "workerpool0", 0,
                        machine_type="ct5lp-hightpu-4t", tpu_topology="2x4")
    plan = host_plan({"CLUSTER_SPEC": spec, "TPU_WORKER_HOSTNAMES": "127.0.0.1",
                      "TPU_WORKER_ID": "0"})
    assert plan.kind == "single"


def test_hosts_that_share_an_address_take_the_coordinator_port_given():
    plan = host_plan({"TPU_WORKER_HOSTNAMES": "127.0.0.1,127.0.0.1", "TPU_WORKER_ID": "0",
                      "JAX_COORDINATOR_PORT": "23456"})
    assert plan.coordinator == "127.0.0.1:23456"
