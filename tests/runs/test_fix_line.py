"""A failed job's page ends its diagnosis with one concrete change to this job's request: the
field, the value it has and the value to try, and a link to the compose form filled in with the
job's request. A cause outside the request (the code) keeps the general advice, with no link.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from controlplane.logs import store
from controlplane.runs import fix_line, lifecycle
from controlplane.runs.models import Job
from tests.fakes import FakeBackend
from tests.vertexplan.logparse.test_failures import OOM_TRACEBACK, VALUE_ERROR_TRACEBACK
from trainers import cli
from vertexplan.logparse.entries import LogEntry

INFO, ERROR = 200, 500
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
A100 = {"machine_type": "a2-highgpu-1g", "accelerator_type": "NVIDIA_TESLA_A100",
        "accelerator_count": 1}


def fail_with_log(job: Job, backend: FakeBackend, lines: list[str], vertex_error: str,
                  severity: int = INFO) -> Job:
    """The job submitted, its replica printing `lines`, then Vertex failing it."""
    lifecycle.submit(job.pk)
    attempt = job.current_attempt()
    entries = [LogEntry(insert_id=f"fix-{i}", timestamp=T0 + timedelta(milliseconds=i),
                        severity=severity, job_id=attempt.vertex_job_id,
                        task_name="workerpool0-0", text_payload=line)
               for i, line in enumerate(lines)]
    store.store_entries(entries, {attempt.vertex_job_id: store.Target(job.pk, 1)})
    backend.set_state(attempt.vertex_name, "JOB_STATE_FAILED", end_time=timezone.now(),
                      error_code=3, error_message=vertex_error)
    lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    assert job.state == "FAILED"
    return job


def header(client: Client, user: Any, job: Job) -> str:
    client.force_login(user)
    return client.get(f"/jobs/{job.pk}/partials/header/").content.decode()


def fix_of(page: str) -> str:
    start = page.index('<p class="fix-line">')
    return page[start:page.index("</p>", start)]


def test_a_cuda_oom_names_the_micro_batch_to_halve_and_links_the_filled_in_form(
        make_job: Callable[..., Job], backend: FakeBackend, client: Client,
        admin_user: Any) -> None:
    job = make_job("llama", chief=A100, strategy="ddp",
                   batch={"global_batch_size": 64, "micro_batch_size": 4})
    fail_with_log(job, backend, OOM_TRACEBACK.splitlines(),
                  "The replica workerpool0-0 exited with a non-zero status of 1.")
    fix = fix_of(header(client, admin_user, job))
    assert "set batch.micro_batch_size to 2 (it is 4;" in fix
    assert "or turn on model.activation_checkpointing" in fix
    # The job list's row says the same fix.
    assert "Fix: set batch.micro_batch_size to 2 (it is 4;" in client.get("/").content.decode()
    compose = f'{reverse("job-compose")}?clone={job.pk}'
    assert f'href="{compose}"' in fix
    # The link opens the compose form holding this job's request, the field to change in it.
    form = client.get(compose).content.decode()
    assert re.search(r'<input[^>]*name="batch_micro"[^>]*value="4"', form)


def test_a_bad_argument_points_at_args(make_job: Callable[..., Job], backend: FakeBackend,
                                       client: Client, admin_user: Any) -> None:
    # The trainer itself, given an argument it does not know: its exit status and its output.
    args = ["--preset", "tiny", "--bogus", "<b>1</b>"]
    ran = subprocess.run([sys.executable, "-m", "trainers.train", *args], capture_output=True,
                         text=True, timeout=120, check=False)
    assert ran.returncode == cli.EXIT_CONFIG == fix_line.EXIT_CONFIG
    job = make_job("typo", args=args)
    fail_with_log(job, backend, (ran.stdout + ran.stderr).splitlines(),
                  f"The replica workerpool0-0 exited with a non-zero status of "
                  f"{ran.returncode}.", severity=ERROR)
    page = header(client, admin_user, job)
    fix = fix_of(page)
    assert "correct the job&#x27;s args" in fix and "status 2" in fix
    # The arguments are quoted as text, never as markup.
    assert "--bogus &lt;b&gt;1&lt;/b&gt;" in fix and "<b>1</b>" not in page
    assert "Clone and change args" in fix


def test_a_quota_error_names_another_region_and_spot(
        make_job: Callable[..., Job], backend: FakeBackend, client: Client,
        admin_user: Any) -> None:
    job = make_job("big", chief=A100, region="us-central1")
    fail_with_log(job, backend, [
        "google.api_core.exceptions.ResourceExhausted: 429 Quota exceeded for quota metric "
        "'aiplatform.googleapis.com/custom_model_training_nvidia_a100_gpus' in region "
        "us-central1"], "The replica workerpool0-0 exited with a non-zero status of 1.")
    fix = fix_of(header(client, admin_user, job))
    assert "set region to " in fix and "(it is us-central1;" in fix
    assert "set scheduling_strategy to SPOT" in fix


def test_a_cause_in_the_code_keeps_the_general_advice_without_a_link(
        make_job: Callable[..., Job], backend: FakeBackend, client: Client,
        admin_user: Any) -> None:
    job = make_job("data")
    fail_with_log(job, backend, VALUE_ERROR_TRACEBACK.splitlines(),
                  "The replica workerpool0-0 exited with a non-zero status of 1.")
    fix = fix_of(header(client, admin_user, job))
    assert "Fix the error at the last frame shown" in fix and "?clone=" not in fix


def test_host_oom_suggests_the_highmem_machine_of_the_same_size() -> None:
    fix = fix_line.for_failure(
        {"kind": "host_oom", "summary": "MemoryError", "fix": "general"},
        {"chief": {"machine_type": "n1-standard-8"}, "deepspeed": {"offload_optimizer": True}},
        {}, "us-central1")
    assert fix.text.startswith("set chief.machine_type to n1-highmem-8 (52 GB; "
                               "n1-standard-8 has 30 GB)")
    assert "or turn off deepspeed.offload_optimizer" in fix.text
    assert fix.fields == ("chief.machine_type", "deepspeed.offload_optimizer")
