"""Which processes are the XLA trainer's hosts (trainers/xla/hosts.py): PJRT's when it joins
several (a multi-VM TPU slice), else the launcher's, else one."""

from __future__ import annotations

import json

import pytest

from trainers.job.cluster import NotATrainer
from trainers.xla.hosts import host_process

pytestmark = pytest.mark.trainers

LAUNCHER = {"RANK": "1", "WORLD_SIZE": "2", "MASTER_ADDR": "10.0.0.2", "MASTER_PORT": "2222"}


def test_pjrts_processes_are_the_hosts_of_a_multi_vm_slice() -> None:
    process = host_process(LAUNCHER, pjrt_index=3, pjrt_count=4)
    assert (process.rank, process.world_size, process.source) == (3, 4, "pjrt")


def test_processes_pjrt_does_not_join_are_the_launchers_hosts() -> None:
    process = host_process(LAUNCHER, pjrt_index=0, pjrt_count=1)
    assert (process.rank, process.world_size, process.master_addr, process.master_port) == (
        1, 2, "10.0.0.2", 2222)
    assert (process.local_rank, process.local_world_size) == (0, 1)  # one process per host


def test_without_either_there_is_one_host_and_a_non_trainer_pool_runs_none() -> None:
    assert host_process({}, 0, 1).world_size == 1
    spec = {"cluster": {"workerpool2": ["rs:1"]}, "task": {"type": "workerpool2", "index": 0}}
    with pytest.raises(NotATrainer):
        host_process({"CLUSTER_SPEC": json.dumps(spec)}, 0, 1)
