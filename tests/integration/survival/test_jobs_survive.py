"""Jobs that survive for real, on the real stack (PostgreSQL, Redis, a Celery worker and beat,
gunicorn, the emulator): a resubmission resumes exactly where it says and refuses a checkpoint
rotation deleted; a job over quota waits visibly and runs once the quota is raised; a spot job
walks SPOT -> FLEX_START -> STANDARD -> a second region through three stockouts, resuming from
its checkpoint at every hop; an out-of-memory traceback printed at INFO is diagnosed."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.survival.stackutil import TERMINAL, admin, vertex_job_id, wait
from tests.integration.survival.test_spot_recovery import stack_page
from tests.stacks import Api, SurvivalStack
from tests.vertexplan.logparse.test_failures import OOM_TRACEBACK

pytestmark = pytest.mark.integration

T4 = "aiplatform.googleapis.com/custom_model_training_nvidia_t4_gpus"


def story(api: Api, job_id: int) -> str:
    """Where a job stands, for a failure report: its state, attempts and events."""
    job = api.get(f"/api/v1/jobs/{job_id}/")
    lines = [f"state={job['state']} attempt={job['attempt']} last_step={job['last_step']} "
             f"error={job['error_message']!r}"]
    attempts = api.get(f"/api/v1/jobs/{job_id}/attempts/")["results"]
    lines += [f"attempt {a.get('number')}: {a.get('scheduling')} {a.get('region')} "
              f"{a.get('vertex_name')} {a.get('vertex_state')} failure={a.get('failure')!r}"
              for a in attempts]
    events = api.get(f"/api/v1/jobs/{job_id}/events/", limit=1000)["results"]
    lines += [f"{e.get('timestamp')} a{e.get('attempt')} {e['kind']} "
              f"{e.get('data')}" for e in events if e["kind"] != "step"][-40:]
    return "\n".join(lines)


def ended(api: Api, job_id: int, stack: SurvivalStack, timeout_s: float = 240) -> dict:
    return wait(lambda: (lambda j: j if j["state"] in TERMINAL else None)(
        api.get(f"/api/v1/jobs/{job_id}/")), timeout_s=timeout_s, what=f"job {job_id} to end",
        stack=stack, describe=lambda: story(api, job_id))


def submit(api: Api, body: dict[str, Any]) -> int:
    response = api.post("/api/v1/jobs/", body)
    assert response.status_code == 201, response.text
    return response.json()["id"]


def events_of(api: Api, job_id: int, kind: str) -> list[dict]:
    return [e for e in api.get(f"/api/v1/jobs/{job_id}/events/", limit=1000)["results"]
            if e["kind"] == kind]


def test_a_resubmission_resumes_at_its_step_and_a_deleted_checkpoint_is_refused(
        survival_stack: SurvivalStack, survival_api: Api,
        survival_seeded: dict[str, Any]) -> None:
    api, stack = survival_api, survival_stack
    original = submit(api, {
        "name": "resume-source", "chief": {"machine_type": "n1-standard-4"},
        "args": ["--preset", "tiny", "--steps", "40", "--checkpoint-every", "10", "--keep",
                 "2", "--eval-every", "0", "--seed", "7"]})
    assert ended(api, original, stack)["state"] == "SUCCEEDED"
    # Keep-last-2: 10 and 20 were deleted by rotation; the list holds 30 and 40.
    wait(lambda: len(events_of(api, original, "checkpoint_deleted")) == 2, timeout_s=30,
         what="the rotation's deletions", stack=stack)
    panel = stack_page(stack, survival_seeded, f"/jobs/{original}/partials/checkpoints/")
    assert "step-00000030" in panel and "step-00000040" in panel
    assert "step-00000010" not in panel and "step-00000020" not in panel

    refused = api.post(f"/api/v1/jobs/{original}/resubmit/", {"checkpoint_step": 10})
    assert refused.status_code == 400
    assert "deleted by rotation" in refused.json()["checkpoint_step"][0]

    response = api.post(f"/api/v1/jobs/{original}/resubmit/", {"checkpoint_step": 30})
    assert response.status_code == 201, response.text
    resumed = response.json()["id"]
    assert ended(api, resumed, stack)["state"] == "SUCCEEDED"
    # The follower stores an ended job's lines as Cloud Logging delivers them: read them once
    # the trainer's last one is in.
    (started,) = [e for e in api.events_through(resumed)
                  if e["kind"] == "run_started" and e["data"]["rank"] == 0]
    assert started["data"]["resumed_from_step"] == 30
    before = {s["step"]: s["loss"] for s in api.steps_through(original, 40)}
    after = {s["step"]: s["loss"] for s in api.steps_through(resumed, 40)}
    assert min(after) == 31, "it trained from step 31, not from step 1"
    assert abs(after[31] - before[31]) <= 1e-5
    assert abs(after[40] - before[40]) <= 1e-5


def test_a_job_over_quota_waits_visibly_and_runs_when_the_quota_is_raised(
        survival_stack: SurvivalStack, survival_api: Api,
        survival_seeded: dict[str, Any]) -> None:
    api, stack = survival_api, survival_stack
    with admin(stack) as client:
        client.set_quota("custom_model_training_nvidia_t4_gpus", 2, region="us-central1")
    job_id = submit(api, {
        "name": "over-quota", "command": ["python", "-c", "print('ran')"], "args": [],
        "chief": {"machine_type": "n1-standard-8", "accelerator_type": "NVIDIA_TESLA_T4",
                  "accelerator_count": 4}})
    job = wait(lambda: (lambda j: j if j["state"] == "WAITING_FOR_QUOTA" else None)(
        api.get(f"/api/v1/jobs/{job_id}/")), timeout_s=30, what="WAITING_FOR_QUOTA",
        stack=stack)
    quota = job["quota_wait"]
    assert (quota["metric"], quota["region"], quota["limit"], quota["requested"]) == \
        (T4, "us-central1", 2, 4)
    page = stack_page(stack, survival_seeded, f"/jobs/{job_id}/")
    assert "Waiting for quota" in page and "it needs 4, 0 in use, limit 2" in page
    # Retried with backoff meanwhile, never in a hot loop (CP_QUOTA_RETRY_CAP_S is 3 s here).
    wait(lambda: api.get(f"/api/v1/jobs/{job_id}/")["quota_wait"]["refusals"] >= 2,
         timeout_s=30, what="a second try", stack=stack)
    with admin(stack) as client:
        client.set_quota("custom_model_training_nvidia_t4_gpus", 8, region="us-central1")
    assert ended(api, job_id, stack, timeout_s=60)["state"] == "SUCCEEDED"
    states = [e["data"]["to"] for e in events_of(api, job_id, "state")]
    assert states[:2] == ["QUEUED", "WAITING_FOR_QUOTA"] and states[-1] == "SUCCEEDED"
    assert states.count("WAITING_FOR_QUOTA") == 1


def test_a_spot_job_walks_through_three_stockouts_to_a_second_region(
        survival_stack: SurvivalStack, survival_api: Api,
        survival_seeded: dict[str, Any]) -> None:
    api, stack = survival_api, survival_stack
    job_id = submit(api, {
        "name": "failover", "scheduling_strategy": "SPOT",
        "chief": {"machine_type": "g2-standard-8", "accelerator_type": "NVIDIA_L4",
                  "accelerator_count": 1},
        "args": ["--preset", "tiny", "--steps", "400", "--checkpoint-every", "20",
                 "--eval-every", "0"],
        # One try per step (the default, said here) and the job's own backoff, shorter than
        # the stack's (CP_RECOVERY_BACKOFF_S=1): every hop waits 0.1 to 0.2 s.
        "recovery": {"strategy": "failover", "max_recoveries": 4, "tries_per_step": 1,
                     "backoff_s": 0.2, "backoff_cap_s": 1,
                     "fallback": ["FLEX_START", "STANDARD"], "regions": ["us-east1"]}})
    job = wait(lambda: (lambda j: j if j["state"] == "RUNNING" and (j["last_step"] or 0) >= 1
                        else None)(api.get(f"/api/v1/jobs/{job_id}/")),
               timeout_s=240, what="RUNNING with steps", stack=stack,
               describe=lambda: story(api, job_id))
    with admin(stack) as client:
        # No machines left in us-central1, whatever the scheduling, for the next three tries;
        # then the spot VM is reclaimed mid-run (20 s notice: the trainer saves and stops),
        # well after its first checkpoint (step 20): a hop sent before the emergency
        # checkpoint's line is read names that one, never none.
        client.stockout("us-central1", count=3)
        client.preempt(vertex_job_id(job), grace_s=20,
                       at_step=max((job["last_step"] or 0) + 10, 45))
    final = ended(api, job_id, stack, timeout_s=300)
    assert final["state"] == "SUCCEEDED", final["error_message"]
    attempts = api.get(f"/api/v1/jobs/{job_id}/attempts/")["results"]
    assert [(a["scheduling"], a["region"], a["failure"]) for a in attempts] == [
        ("SPOT", "us-central1", "stockout"), ("FLEX_START", "us-central1", "stockout"),
        ("STANDARD", "us-central1", "stockout"), ("SPOT", "us-east1", "")]
    (preempted,) = events_of(api, job_id, "preempted")
    saved_step = preempted["data"]["step"]
    hops = events_of(api, job_id, "recovery")
    assert [(h["data"]["scheduling"], h["data"]["region"]) for h in hops] == [
        ("FLEX_START", "us-central1"), ("STANDARD", "us-central1"), ("SPOT", "us-east1")]
    assert all(0.1 <= h["data"]["delay_s"] <= 0.2 for h in hops), hops
    # Every hop's submission names the newest checkpoint the control plane knows of when it is
    # sent. The three stockouts come within seconds, so a hop may be sent before the
    # emergency checkpoint's log line is read (it then names the one before); what counts is
    # that the trainer itself takes the newest committed checkpoint on storage.
    submitted = {e["attempt"]: e["data"] for e in events_of(api, job_id, "submitted")}
    for number in (2, 3, 4):
        assert submitted[number]["resume_step"] <= saved_step
        assert submitted[number]["resume_path"].endswith(
            f"step-{submitted[number]['resume_step']:08d}")
    resumed = [e for e in events_of(api, job_id, "resumed") if e["attempt"] == 4]
    assert resumed and resumed[0]["data"]["step"] == saved_step
    page = stack_page(stack, survival_seeded, f"/jobs/{job_id}/")
    assert "us-east1" in page and f"cp-{job_id}-a4" in page
    assert f"resuming from step {submitted[4]['resume_step']}" in page


def test_an_oom_printed_at_info_is_diagnosed(survival_stack: SurvivalStack, survival_api: Api,
                                            survival_seeded: dict[str, Any]) -> None:
    api, stack = survival_api, survival_stack
    script = f"import sys; print({OOM_TRACEBACK!r}); sys.exit(1)"
    job_id = submit(api, {"name": "oom-on-stdout", "command": ["python", "-c", script],
                          "args": [], "chief": {"machine_type": "n1-standard-4"}})
    assert ended(api, job_id, stack)["state"] == "FAILED"
    job = wait(lambda: (lambda j: j if j["diagnosis"] and j["diagnosis"]["kind"] == "gpu_oom"
                        else None)(api.get(f"/api/v1/jobs/{job_id}/")), timeout_s=30,
               what="the OOM diagnosis", stack=stack)
    assert "CUDA out of memory" in job["diagnosis"]["summary"]
    assert job["diagnosis"]["fix"].startswith("Lower the per-device batch size")
    lines = api.get(f"/api/v1/jobs/{job_id}/logs/", q="OutOfMemoryError")["results"]
    assert lines and all(line["severity"] in ("INFO", 200) for line in lines)
    header = stack_page(stack, survival_seeded, f"/jobs/{job_id}/partials/header/")
    assert "GPU out of memory" in header and "Fix:" in header
    rows = stack_page(stack, survival_seeded, "/")
    assert "GPU out of memory" in rows
