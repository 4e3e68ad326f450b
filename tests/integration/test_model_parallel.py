"""A tensor x pipeline x data parallel job composed from the API runs on the real stack: the
composer's launcher (`--nproc-per-node`, torchrun per replica, rendezvous from CLUSTER_SPEC)
starts one trainer process per GPU of each replica, and the degrees show in run_started and on
the page. Two replicas of four GPUs: the mesh (pp, dp, tp) puts a tensor-parallel pair and its
data-parallel peer inside each replica and the pipeline stages across the two replicas, the
layout Vertex gives a TP-in-node, PP-across-nodes job.

The emulator runs one process per replica; the built-in trainer given `--nproc-per-node N`
starts torchrun itself, as it does on Vertex. No GPU is used: the processes train on CPU with
gloo, the way the emulator runs every job.
"""

from __future__ import annotations

from typing import Any

import pytest

from config.devstack import Stack
from tests.integration.test_end_to_end import TERMINAL, browser_session
from tests.stacks import Api

pytestmark = pytest.mark.integration

FOUR_GPUS = {"machine_type": "n1-standard-8", "accelerator_type": "NVIDIA_TESLA_T4",
             "accelerator_count": 4}
# Eight trainer processes share the test machine's cores: few steps of the tiny model.
STEPS = 8


def test_a_tensor_x_pipeline_x_data_job_runs_to_succeeded_with_its_degrees_shown(
        stack: Stack, api: Api, seeded: dict[str, Any]) -> None:
    request = {
        "name": "tp2-pp2-dp2",
        "strategy": "ddp",
        "args": ["--preset", "tiny", "--steps", str(STEPS), "--checkpoint-every", "4",
                 "--batch-size", "8", "--eval-every", "0"],
        "chief": dict(FOUR_GPUS),
        "workers": {"replica_count": 1},
        "parallelism": {"tensor": 2, "pipeline": 2, "pipeline_schedule": "gpipe"},
    }
    response = api.post("/api/v1/jobs/", request)
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]

    job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=400,
                       what="the tp x pp x dp job to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]

    events = api.events_through(job_id)
    started = [e for e in events if e["kind"] == "run_started"]
    # Two replicas of four processes each: eight ranks, each reporting the same degrees.
    assert sorted(e["data"]["rank"] for e in started) == list(range(8))
    replica_of = {e["data"]["rank"]: e["replica"] for e in started}
    assert {replica_of[r] for r in range(4)} == {"workerpool0-0"}
    assert {replica_of[r] for r in range(4, 8)} == {"workerpool1-0"}
    for event in started:
        assert event["data"]["world_size"] == 8
        assert event["data"]["dims"] == {"dp": 2, "tp": 2, "pp": 2}
    launching = api.get(f"/api/v1/jobs/{job_id}/logs/", q="torch.distributed.run", limit=5)
    assert launching["count"] >= 2, "each replica started torchrun with 4 processes"
    steps = api.steps_through(job_id, STEPS)
    assert [s["step"] for s in steps] == list(range(1, STEPS + 1))
    assert [e["step"] for e in events if e["kind"] == "checkpoint_saved"][:2] == [4, 8]

    session = browser_session(stack, seeded["username"], seeded["password"])
    page = session.get(f"{stack.web_url}/jobs/{job_id}/", timeout=10)
    assert page.status_code == 200
    assert "tp2-pp2-dp2" in page.text and "SUCCEEDED" in page.text
    assert "dp 2 x tp 2 x pp 2" in page.text
