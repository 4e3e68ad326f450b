"""Ray on Vertex on the real stack: a Ray cluster (head + 2 workers) is created through the
API, the emulator runs it as real Ray processes, Ray jobs submitted through Ray's Job
Submission API succeed on it (a plain driver, and a Ray Train run of the product's trainer on
two workers, whose steps, checkpoints and searchable logs are its job's in the log store, as a
CustomJob's are), and deleting the cluster stops its processes and its cost.
Bad requests get field errors and change nothing."""

from __future__ import annotations

import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import localvertex.replicas.processes as processes
import localvertex.replicas.storage as local_storage
from localvertex.clusters.ray_nodes import ray_executable

pytestmark = pytest.mark.integration

# Every node a small CPU count: the head and two workers fit a 2-core machine.
RAY_CLUSTER = {
    "name": "ray-it",
    "pools": [
        {"id": "head", "machine_type": "n1-standard-4"},
        {"id": "workers", "machine_type": "n1-standard-4", "replica_count": 2},
    ],
    "ray": {"version": "2.47.1"},
}
# Runs on the cluster: counts the nodes Ray sees and runs one task on each worker's CPUs.
DRIVER = """
import ray
ray.init()
print("RAY_NODES", sum(1 for n in ray.nodes() if n["Alive"]))
@ray.remote(num_cpus=1)
def where():
    return ray.get_runtime_context().get_node_id()
print("TASKS_ON_NODES", len(set(ray.get([where.remote() for _ in range(6)]))))
print("ANSWER", ray.get(ray.put(6 * 7)))
"""


def wait(api, path: str, ok, *, timeout_s: float, stack) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    body: dict[str, Any] = {}
    while time.monotonic() < deadline:
        body = api.get(path)
        if ok(body):
            return body
        time.sleep(1)
    raise AssertionError(f"timed out on {path}: {json.dumps(body)[:1500]}\n--- worker ---\n"
                         f"{stack.log_tail('worker')}\n--- emulator ---\n"
                         f"{stack.log_tail('emulator')}")


def ray_pids(stack, cluster: dict) -> list[int]:
    marker = f"ray:cp-cl-{cluster['id']}"
    return [pid for pid, job, _ in processes.find_strays(stack.emulator_data_dir)
            if job == marker]


def assert_ray_job_in_the_log_store(api, ray_job: dict) -> None:
    """The Ray job's job: SUCCEEDED, its steps, checkpoints and end as a CustomJob's, its
    lines searchable, linked both ways; and not among the jobs listed as jobs."""
    job_id = ray_job["job"]
    job = api.get(f"/api/v1/jobs/{job_id}/")
    assert job["kind"] == "ray" and job["state"] == "SUCCEEDED", job
    assert job["origin"]["api"] == f"/api/v1/clusters/ray-jobs/{ray_job['id']}/"
    assert job["last_step"] == 6 and job["total_steps"] == 6
    steps = api.get(f"/api/v1/jobs/{job_id}/steps/", limit=100)["results"]
    assert [s["step"] for s in steps] == [1, 2, 3, 4, 5, 6]
    assert all(s["loss"] is not None for s in steps)
    events = api.get(f"/api/v1/jobs/{job_id}/events/", limit=500)["results"]
    saved = [e["step"] for e in events if e["kind"] == "checkpoint_saved"]
    assert saved == [3, 6], [e["kind"] for e in events]
    assert [e["step"] for e in events if e["kind"] == "run_finished"] == [6]
    assert not [e for e in events if e["kind"] == "suspicious_event"], events
    assert sorted(c["step"] for c in job["checkpoints"]) == [3, 6]
    found = api.get(f"/api/v1/jobs/{job_id}/logs/", q="FINISHED AT STEP 6")["results"]
    assert [line["message"] for line in found][:1] and all(
        "finished at step 6" in line["message"] for line in found)
    assert job_id not in [j["id"] for j in api.get("/api/v1/jobs/", limit=200)["results"]]
    assert job_id in [j["id"] for j in api.get("/api/v1/jobs/", kind="ray")["results"]]


def test_ray_cluster_job_and_deletion(stack, api, tmp_path):
    if ray_executable() is None:
        pytest.fail("Ray is not installed: make venv installs the ray extra")

    # Field errors first: nothing is created by them (other tests' clusters on the shared
    # stack stay as they were).
    before = [c["id"] for c in api.get("/api/v1/clusters/", all=1)["results"]]
    bad_head = json.loads(json.dumps(RAY_CLUSTER))
    bad_head["pools"][0].update(accelerator_type="NVIDIA_TESLA_A100", accelerator_count=1)
    response = api.post("/api/v1/clusters/", bad_head)
    assert response.status_code == 400, response.text
    assert "pools[0].accelerator_type" in response.json()
    response = api.post("/api/v1/clusters/", {**RAY_CLUSTER, "ray": {"version": "2.9.0"}})
    assert response.status_code == 400
    assert "2.47.1" in " ".join(response.json()["ray.version"])
    assert [c["id"] for c in api.get("/api/v1/clusters/", all=1)["results"]] == before

    response = api.post("/api/v1/clusters/", RAY_CLUSTER)
    assert response.status_code == 201, response.text
    cluster = response.json()
    assert cluster["hourly_micros"] > 0 and "whether or not a job runs" in cluster["billing"]
    cluster = wait(api, f"/api/v1/clusters/{cluster['id']}/",
                   lambda c: c["state"] in ("RUNNING", "FAILED"), timeout_s=300, stack=stack)
    assert cluster["state"] == "RUNNING", cluster["error_message"]
    dashboard = cluster["dashboard_uri"]
    with urllib.request.urlopen(f"http://{dashboard}/nodes?view=summary", timeout=10) as r:
        nodes = json.load(r)["data"]["summary"]
    assert sum(n["raylet"]["state"] == "ALIVE" for n in nodes) == 3
    assert ray_pids(stack, cluster)

    response = api.post("/api/v1/clusters/ray-jobs/", {
        "cluster": cluster["id"], "entrypoint": ["python", "-c", DRIVER],
        "env_vars": {"CP_NOTE": "it's; $(not a shell)"}})
    assert response.status_code == 201, response.text
    job = wait(api, f"/api/v1/clusters/ray-jobs/{response.json()['id']}/",
               lambda j: j["state"] in ("SUCCEEDED", "FAILED", "STOPPED"), timeout_s=240,
               stack=stack)
    logs = api.get(f"/api/v1/clusters/ray-jobs/{job['id']}/logs/")["logs"]
    assert job["state"] == "SUCCEEDED", logs
    assert "RAY_NODES 3" in logs and "ANSWER 42" in logs

    # Ray Train: the product's trainer on the two worker nodes, its events in the job's logs
    # and its checkpoints in the job's own folder (AIP_CHECKPOINT_DIR, as for a CustomJob).
    response = api.post("/api/v1/clusters/ray-jobs/", {
        "cluster": cluster["id"], "entrypoint": [
            "python", "-m", "trainers.ray_train", "--workers", "2", "--",
            "--preset", "tiny", "--steps", "6", "--checkpoint-every", "3"],
        "env_vars": {"RAY_DEDUP_LOGS": "0"}})
    assert response.status_code == 201, response.text
    job = wait(api, f"/api/v1/clusters/ray-jobs/{response.json()['id']}/",
               lambda j: j["state"] in ("SUCCEEDED", "FAILED", "STOPPED"), timeout_s=400,
               stack=stack)
    logs = api.get(f"/api/v1/clusters/ray-jobs/{job['id']}/logs/")["logs"]
    assert job["state"] == "SUCCEEDED", logs[-5000:]
    # Once each: every node's log monitor forwarded the shared logs folder, twice over.
    assert logs.count('"event":"run_started","rank":1,"world_size":2') == 1, logs[-5000:]
    assert '"event":"run_finished","step":6' in logs
    own = api.get(f"/api/v1/jobs/{job['job']}/")
    output = own["custom_job"]["jobSpec"]["baseOutputDirectory"]["outputUriPrefix"]
    checkpoints = Path(local_storage.local_path(stack.emulator_data_dir, output)) / "checkpoints"
    assert sorted(p.name for p in checkpoints.glob("step-*")) == ["step-00000003",
                                                                   "step-00000006"]
    assert_ray_job_in_the_log_store(api, job)
    summary = job["summary"]
    assert summary["ranks"] == [0, 1] and summary["finished"]["step"] == 6
    assert [step for step, _ in summary["loss"]] == [1, 2, 3, 4, 5, 6]
    assert [c["step"] for c in summary["checkpoints"]] == [3, 6]

    response = api.session.delete(f"{api.base}/api/v1/clusters/{cluster['id']}/", timeout=30)
    assert response.status_code == 202
    deleted = wait(api, f"/api/v1/clusters/{cluster['id']}/",
                   lambda c: c["state"] == "DELETED", timeout_s=120, stack=stack)
    assert ray_pids(stack, cluster) == []
    # Its cost stopped at deletion.
    assert api.get(f"/api/v1/clusters/{cluster['id']}/")["accrued_micros"] == \
        deleted["accrued_micros"]

    response = api.post("/api/v1/clusters/ray-jobs/", {
        "cluster": cluster["id"], "entrypoint": ["python", "-c", "print(1)"]})
    assert response.status_code == 400
    assert "DELETED" in " ".join(response.json()["cluster"])
