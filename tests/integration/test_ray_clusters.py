"""Ray on Vertex on the real stack: a Ray cluster (head + 2 workers) is created through the
API, the emulator runs it as real Ray processes, Ray jobs submitted through Ray's Job
Submission API succeed on it (a plain driver, submitted from the cluster page in chromium and
its output read there at 1440 and 390 px, and a Ray Train run of the product's trainer on
two workers, whose steps, checkpoints and searchable logs are its job's in the log store, as a
CustomJob's are), and deleting the cluster stops its processes and its cost.
Bad requests get field errors and change nothing."""

from __future__ import annotations

import json
import re
import shlex
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

import localvertex.replicas.processes as processes
import localvertex.replicas.storage as local_storage
from localvertex import auth
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


# What the browser's pages logged as errors (none may be).
CONSOLE_ERRORS: list[str] = []
# The driver typed into the cluster page's one-line entrypoint field.
PAGE_DRIVER = ("import ray; ray.init(); "
               "print('RAY_NODES', sum(1 for n in ray.nodes() if n['Alive'])); "
               "print('ANSWER', ray.get(ray.put(6 * 7)))")


def signed_in_page(browser: Any, stack: Any, seeded: dict[str, Any]) -> Any:
    context = browser.new_context(base_url=stack.web_url,
                                  viewport={"width": 1440, "height": 900})
    page = context.new_page()
    CONSOLE_ERRORS.clear()
    page.on("console", lambda m: CONSOLE_ERRORS.append(f"{m.text} ({m.location.get('url')})")
            if m.type == "error" else None)
    page.on("pageerror", lambda e: CONSOLE_ERRORS.append(str(e)))
    page.on("response", lambda r: CONSOLE_ERRORS.append(f"HTTP {r.status} {r.url}")
            if r.status >= 400 else None)
    page.goto("/login/")
    page.fill("#id_username", seeded["username"])
    page.fill("#id_password", seeded["password"])
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)
    return page


def submit_from_the_cluster_page(page: Any, cluster_id: int) -> str:
    """The Ray job form filled and sent; the submission id the page's message names."""
    response = page.goto(f"/clusters/{cluster_id}/")
    form = page.locator("#ray-job-form")
    assert response is not None and response.status == 200 and form.count() == 1, (
        page.url, response and response.status, page.locator("main").inner_text()[:3000])
    page.fill("#ray-job-form [name=ray-entrypoint]", shlex.join(["python", "-c", PAGE_DRIVER]))
    page.fill("#ray-job-form [name=ray-env_vars]", "CP_NOTE=it's; $(not a shell)")
    page.click("#ray-job-submit")
    page.wait_for_load_state()
    said = page.locator(".messages").inner_text()
    found = re.search(r"Ray job (\S+) submitted to", said)
    assert found, said
    return found.group(1)


def read_the_output_on_the_cluster_page(page: Any, cluster_id: int) -> None:
    """The finished job's output on the cluster page, at 1440 and 390 px: its lines, once
    each, and a page that never scrolls sideways, with no console error."""
    for width, height in ((1440, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"/clusters/{cluster_id}/")
        page.wait_for_load_state()
        output = page.locator("#ray-output").inner_text()
        assert output.count("ANSWER 42") == 1, output
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"the cluster page scrolls sideways by {overflow} px at {width}"
    assert not CONSOLE_ERRORS, CONSOLE_ERRORS
    page.context.close()


def test_ray_cluster_job_and_deletion(stack, api, tmp_path, browser, seeded):
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
    # Ray's token authentication: the dashboard (and its Job Submission API) answers the
    # cluster's token, which the control plane derives (localvertex/auth.py), and nobody else.
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"http://{dashboard}/api/jobs/", timeout=10)
    assert refused.value.code == 401
    token = auth.ray_token(stack.emulator_token, cluster["vertex_name"], dashboard)
    with urllib.request.urlopen(urllib.request.Request(
            f"http://{dashboard}/nodes?view=summary",
            headers={"Authorization": f"Bearer {token}"}), timeout=10) as r:
        nodes = json.load(r)["data"]["summary"]
    assert sum(n["raylet"]["state"] == "ALIVE" for n in nodes) == 3
    assert ray_pids(stack, cluster)

    # A Ray job submitted from the cluster page, as a user clicks, and its output read there.
    page = signed_in_page(browser, stack, seeded)
    submission = submit_from_the_cluster_page(page, cluster["id"])
    [ray_job] = [j for j in api.get("/api/v1/clusters/ray-jobs/", all=1)["results"]
                 if j["submission_id"] == submission]
    assert ray_job["env_vars"] == {"CP_NOTE": "it's; $(not a shell)"}
    job = wait(api, f"/api/v1/clusters/ray-jobs/{ray_job['id']}/",
               lambda j: j["state"] in ("SUCCEEDED", "FAILED", "STOPPED"), timeout_s=240,
               stack=stack)
    logs = api.get(f"/api/v1/clusters/ray-jobs/{job['id']}/logs/")["logs"]
    assert job["state"] == "SUCCEEDED", logs
    assert "RAY_NODES 3" in logs and "ANSWER 42" in logs
    read_the_output_on_the_cluster_page(page, cluster["id"])

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
