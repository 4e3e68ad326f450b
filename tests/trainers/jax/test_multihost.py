"""Two hosts (processes) of 4 devices each, joined by `jax.distributed.initialize` from the
TPU VM variables, train exactly as one process of 8 devices does; they stop together when only
one of them gets SIGTERM, and write one checkpoint between them (which test_meshes.py shows
resumes). Host 1 is slowed on purpose (--debug-slow-rank): the control plane's straggler rule
names it from host 0's step events alone."""

from __future__ import annotations

import signal

import pytest

from config.ports import reserve_port
from tests.trainers.jax.conftest import INTERRUPTED_MESH, STOP_STEP, TIMEOUT_S, start_jax
from tests.trainers.replicas import assert_losses_close, stop_all
from vertexplan.health import straggler_verdict

pytestmark = pytest.mark.trainers

HOSTS = 2
# Host 1's extra seconds in every step: its own time is then several times host 0's (a tiny
# step's batch and dispatch take milliseconds), far past the rule's 1.3x the median.
SLOW_S = 0.2


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
            "--checkpoint-every", "0", "--debug-slow-rank", "1", "--debug-slow-seconds",
            str(SLOW_S), "--set", "rank_times_every=1"]  # a report at every step up to the stop
    hosts = start_hosts(args, compile_cache, reserve_port())
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
    # Each host's own step time, gathered with the stop flags from step 2 on (the first step's
    # first calls are left out): host 1 sleeps in every step.
    reports = {e["step"]: e["rank_step_time_s"] for e in main.of("step")
               if "rank_step_time_s" in e}
    assert sorted(reports) == list(range(2, STOP_STEP + 1)), reports
    assert all(len(r) == HOSTS and r[1] >= SLOW_S > r[0] for r in reports.values()), reports
    assert straggler_verdict(list(reports.values())).ranks == (1,)

