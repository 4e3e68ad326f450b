"""Helpers for the survival tests that drive the real stack."""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Iterable

import grpc
from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1.services.job_service.transports import JobServiceGrpcTransport

from config.devstack import Stack
from localvertex import auth
from localvertex.admin.client import AdminClient
from tests.stacks import Api

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
PARENT = "projects/local-project/locations/us-central1"
VERTEX_TERMINAL = {"JOB_STATE_SUCCEEDED": "SUCCEEDED", "JOB_STATE_FAILED": "FAILED",
                   "JOB_STATE_CANCELLED": "CANCELLED"}


def emulator_addr(stack: Stack) -> str:
    return f"127.0.0.1:{stack.config.emulator_port}"


def custom_jobs(stack: Stack) -> list[aiplatform_v1.CustomJob]:
    """Every CustomJob the emulator has (call with no API faults injected)."""
    channel = auth.channel(emulator_addr(stack), stack.emulator_token)
    try:
        client = aiplatform_v1.JobServiceClient(
            transport=JobServiceGrpcTransport(channel=channel))
        return list(client.list_custom_jobs(request={"parent": PARENT, "page_size": 1000}))
    finally:
        channel.close()


def custom_jobs_by_job(stack: Stack, job_ids: Iterable[int]
                       ) -> dict[int, list[aiplatform_v1.CustomJob]]:
    wanted = {str(j) for j in job_ids}
    found: dict[int, list[aiplatform_v1.CustomJob]] = collections.defaultdict(list)
    for custom_job in custom_jobs(stack):
        if custom_job.labels.get("cp-job") in wanted:
            found[int(custom_job.labels["cp-job"])].append(custom_job)
    return found


def admin(stack: Stack) -> AdminClient:
    return AdminClient(stack.emulator_admin_addr, stack.emulator_token)


def arm_preemptions(stack: Stack, job: dict, steps: list[int], grace_s: float) -> None:
    """Arm a spot preemption of the job's CustomJob for each step its trainer reports, in
    order; waits for the emulator to have started the job's runner."""
    def arm(step: int) -> bool:
        with admin(stack) as client:
            try:
                return bool(client.preempt(vertex_job_id(job), grace_s=grace_s, at_step=step))
            except grpc.RpcError:
                return False  # the emulator has not started the job's runner yet

    wait(lambda: arm(steps[0]), timeout_s=60, what="the first preemption armed", stack=stack)
    for step in steps[1:]:
        assert arm(step), f"the preemption at step {step} was not armed"


def wait(predicate: Callable[[], object], *, timeout_s: float, what: str, stack: Stack,
         interval_s: float = 1.0, describe: Callable[[], object] | None = None) -> object:
    """Poll until predicate() is truthy; fail with the stack's logs, and what `describe` says
    of the thing waited on, when it never is."""
    started = time.strftime("%H:%M:%S")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval_s)
    described = ""
    if describe is not None:
        try:
            described = f"\n--- {what}: where it stands ---\n{describe()}"
        except Exception as exc:  # the failure report must still come out
            described = f"\n--- {what}: could not be described: {exc!r}"
    raise AssertionError(f"timed out waiting for {what} (from {started}, {timeout_s:.0f} s)"
                         f"{described}\n--- beat ---\n{stack.log_tail('beat', 10)}"
                         f"\n--- worker ---\n{stack.log_tail('worker', 60)}"
                         f"\n--- emulator ---\n{stack.log_tail('emulator', 30)}")


def jobs_named(api: Api, prefix: str) -> list[dict]:
    jobs: list[dict] = []
    offset = 0
    while True:
        page = api.get("/api/v1/jobs/", limit=200, offset=offset)
        jobs += [j for j in page["results"] if j["name"].startswith(prefix)]
        offset += len(page["results"])
        if not page["next"]:
            return jobs


def vertex_job_id(job: dict) -> str:
    attempt = next(a for a in job["attempts"] if a["number"] == job["attempt"])
    return attempt["vertex_name"].rsplit("/", 1)[-1]
