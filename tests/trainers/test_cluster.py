"""Rank, world size and master derived from torchrun/emulator variables or Vertex CLUSTER_SPEC."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest

from tests.trainers.replicas import train
from trainers.job.cluster import (
    ClusterError,
    Node,
    NotATrainer,
    node_from_cluster_spec,
    process_from_env,
)
from trainers.torch.distributed import launcher_argv, model_modules, resolve_nproc_per_node

pytestmark = pytest.mark.trainers


def cluster_spec(task_type: str, index: int, workers: int = 2, extra_pools: bool = True) -> str:
    cluster = {
        "workerpool0": ["chief-host:2222"],
        "workerpool1": [f"worker-{i}:2222" for i in range(workers)],
    }
    if extra_pools:
        cluster["workerpool2"] = ["reducer-0:2222"]
        cluster["workerpool3"] = ["evaluator-0:2222"]
    return json.dumps(
        {
            "cluster": cluster,
            "environment": "cloud",
            "task": {"type": task_type, "index": index, "trial": "1"},
            "job": {"worker_pool_specs": []},
        }
    )


def test_torchrun_variables_are_used_as_they_are():
    env = {
        "RANK": "3",
        "WORLD_SIZE": "4",
        "MASTER_ADDR": "10.0.0.2",
        "MASTER_PORT": "29500",
        "LOCAL_RANK": "1",
        "LOCAL_WORLD_SIZE": "2",
    }
    p = process_from_env(env)
    assert (p.rank, p.world_size, p.local_rank, p.local_world_size) == (3, 4, 1, 2)
    assert (p.master_addr, p.master_port, p.source) == ("10.0.0.2", 29500, "env")


def test_emulator_variables_without_local_rank_mean_one_process_per_replica():
    p = process_from_env(
        {"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1234"}
    )
    assert (p.rank, p.world_size, p.local_rank, p.local_world_size) == (1, 2, 0, 1)


def test_incomplete_torchrun_variables_are_refused():
    with pytest.raises(ClusterError, match="MASTER_ADDR, MASTER_PORT missing"):
        process_from_env({"RANK": "0", "WORLD_SIZE": "2"})
    with pytest.raises(ClusterError, match="outside"):
        process_from_env({"RANK": "2", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1"})


def test_chief_is_rank_zero_and_master():
    p = process_from_env({"CLUSTER_SPEC": cluster_spec("workerpool0", 0, workers=2)})
    assert (p.rank, p.world_size, p.master_addr, p.master_port) == (0, 3, "chief-host", 2222)
    assert p.source == "cluster_spec"


def test_workers_are_ranked_after_the_chief_in_order():
    ranks = [
        process_from_env({"CLUSTER_SPEC": cluster_spec("workerpool1", i, workers=3)}).rank
        for i in range(3)
    ]
    assert ranks == [1, 2, 3]
    assert process_from_env({"CLUSTER_SPEC": cluster_spec("workerpool1", 2, 3)}).world_size == 4


def test_single_replica_job():
    spec = cluster_spec("workerpool0", 0, workers=0, extra_pools=False)
    p = process_from_env({"CLUSTER_SPEC": spec})
    assert (p.rank, p.world_size) == (0, 1)


@pytest.mark.parametrize("pool", ["workerpool2", "workerpool3"])
def test_reduction_server_and_evaluator_pools_are_not_trainers(pool):
    with pytest.raises(NotATrainer) as caught:
        process_from_env({"CLUSTER_SPEC": cluster_spec(pool, 0)})
    assert caught.value.task_type == pool
    # Even when something also set RANK for the replica, it must not join the process group.
    env = {
        "CLUSTER_SPEC": cluster_spec(pool, 0),
        "RANK": "3",
        "WORLD_SIZE": "4",
        "MASTER_ADDR": "chief-host",
        "MASTER_PORT": "2222",
    }
    with pytest.raises(NotATrainer):
        process_from_env(env)


def test_torchrun_variables_win_over_cluster_spec():
    env = {
        "CLUSTER_SPEC": cluster_spec("workerpool1", 0),
        "RANK": "5",
        "WORLD_SIZE": "8",
        "MASTER_ADDR": "10.1.1.1",
        "MASTER_PORT": "29400",
        "LOCAL_RANK": "1",
        "LOCAL_WORLD_SIZE": "4",
    }
    p = process_from_env(env)
    assert (p.rank, p.world_size, p.master_addr, p.source) == (5, 8, "10.1.1.1", "env")


def test_no_cluster_means_one_process():
    p = process_from_env({})
    assert (p.rank, p.world_size, p.source) == (0, 1, "single")


@pytest.mark.parametrize(
    "spec, message",
    [
        ("{not json", "not valid JSON"),
        (
            json.dumps({"cluster": {"workerpool0": ["h:1"]}, "task": {"type": "chief"}}),
            "not a worker",
        ),
        (
            json.dumps({"cluster": {"workerpool0": ["nohost"]}, "task": {"type": "workerpool0"}}),
            "host:port",
        ),
        (
            json.dumps(
                {"cluster": {"workerpool0": ["h:1"]}, "task": {"type": "workerpool1", "index": 0}}
            ),
            "not in the cluster",
        ),
    ],
)
def test_malformed_cluster_spec_is_refused(spec, message):
    with pytest.raises(ClusterError, match=message):
        process_from_env({"CLUSTER_SPEC": spec})


def test_ipv6_master_address():
    spec = {"cluster": {"workerpool0": ["[fd00::1]:2222"]}, "task": {"type": "workerpool0"}}
    node = node_from_cluster_spec(spec)
    assert (node.master_addr, node.master_port) == ("fd00::1", 2222)


def test_nproc_per_node():
    assert resolve_nproc_per_node("auto", 0) == 1
    assert resolve_nproc_per_node("auto", 8) == 8
    assert resolve_nproc_per_node("2", 0) == 2
    with pytest.raises(ClusterError):
        resolve_nproc_per_node("many", 0)
    with pytest.raises(ClusterError):
        resolve_nproc_per_node("0", 0)


def test_launcher_command_for_a_multi_gpu_vertex_replica():
    node = Node(
        node_rank=2, num_nodes=4, master_addr="chief-host", master_port=2222, source="cluster_spec"
    )
    argv = launcher_argv(node, 8, ["--preset", "small"])
    assert argv[:3] == [sys.executable, "-m", "torch.distributed.run"]
    assert {
        "--nproc-per-node=8",
        "--nnodes=4",
        "--node-rank=2",
        "--master-addr=chief-host",
        "--master-port=2222",
    } <= set(argv)
    # The children must not start launchers of their own.
    assert argv[-5:] == ["-m", "trainers.train", "--preset", "small", "--nproc-per-node=1"]


def test_launcher_command_on_one_machine_without_a_master():
    argv = launcher_argv(Node(0, 1, "127.0.0.1", 0, "single"), 2, [])
    assert "--standalone" in argv
    assert not any(a.startswith("--master-port") for a in argv)


def test_the_fork_server_imports_transformers_only_for_a_hugging_face_model():
    assert model_modules(["--preset", "tiny", "--steps", "3"]) == []
    for args in (["--model-config", "llama-3-8b"], ["--init-from=/gcs/b/llama"]):
        modules = model_modules(args)
        assert "transformers.modeling_utils" in modules
        for name in modules:  # each a module that exists, so the fork server imports it
            assert importlib.util.find_spec(name) is not None, name


def test_a_reduction_server_replica_exits_zero_without_training():
    result = train([], timeout=60, CLUSTER_SPEC=cluster_spec("workerpool2", 0))
    assert result.returncode == 0, result.stderr
    event = result.one("not_a_trainer")
    assert event["task_type"] == "workerpool2"
    assert not result.of("run_started")
