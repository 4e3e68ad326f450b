"""Two hosts (processes) of 4 devices each, joined by `jax.distributed.initialize` from the
TPU VM variables, train exactly as one process of 8 devices does; they stop together when only
one of them gets SIGTERM, and write one checkpoint between them (which test_meshes.py shows
resumes)."""

from __future__ import annotations

import signal

import pytest

from tests.trainers.jax.conftest import INTERRUPTED_MESH, STOP_STEP, TIMEOUT_S, start_jax
from tests.trainers.replicas import assert_losses_close, stop_all
from trainers.job.cluster import free_port

pytestmark = pytest.mark.trainers

HOSTS = 2


def start_hosts(args: list[str], cache, port: int):
    """Host 1 waits after step 5 for its signal; host 0, meanwhile, waits for host 1 in the
    step's agreement on stopping."""
    names = ",".join(["127.0.0.1"] * HOSTS)
    return [
        start_jax(args, 8 // HOSTS, cache, TPU_WORKER_HOSTNAMES=names, TPU_WORKER_ID=str(i),
                  JAX_COORDINATOR_PORT=str(port),
                  **({"TRAINERS_PAUSE_AT": f"step_end:{STOP_STEP}"} if i == 1 else {}))
        for i in range(HOSTS)
    ]


def test_two_hosts_train_as_one_process_of_all_their_devices(compile_cache, mesh_runs,
                                                             tmp_path):
    ckpt = tmp_path / "ckpt"
    args = ["--mesh", INTERRUPTED_MESH, "--eval-every", "0", "--checkpoint-dir", str(ckpt),
            "--checkpoint-every", "0"]
    hosts = start_hosts(args, compile_cache, free_port())
    try:
        hosts[1].wait_for(lambda e: e.get("event") == "paused", TIMEOUT_S)
        hosts[1].signal(signal.SIGTERM)  # a preemption notice that reaches one VM only
        results = [h.finish(TIMEOUT_S) for h in hosts]
    finally:
        stop_all(hosts)
    assert [r.returncode for r in results] == [128 + signal.SIGTERM] * HOSTS, results[0].stderr
    main, other = results
    assert [e["world_size"] for r in results for e in r.of("run_started")] == [HOSTS] * HOSTS
    assert main.one("run_started")["devices"] == 8
    assert other.of("step") == [] and other.of("preempted") == []  # host 0 speaks for all
    stop_step = main.one("preempted")["step"]
    assert stop_step == STOP_STEP
    assert (ckpt / f"step-{stop_step:08d}" / "COMMITTED").exists()
    assert_losses_close(main.losses(), mesh_runs[INTERRUPTED_MESH][0].losses(), 1e-4)

