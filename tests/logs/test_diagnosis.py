"""Failures in plain sight: every line is scanned whatever its severity, CustomJob.error is
classified, and a failed job's headline (the cause and the fix) is in its page header, its
list row, the REST API and the Slack message; a cancel the user asked for reads as a cancel."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from django.test import Client
from django.utils import timezone

from controlplane.logs import queries, store
from controlplane.logs.models import LogFailure
from controlplane.runs import lifecycle
from controlplane.runs.models import Job
from tests.fakes import FakeBackend
from tests.vertexplan.logparse.test_failures import OOM_TRACEBACK
from vertexplan.logparse.entries import LogEntry

INFO = 200
T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def print_on_stdout(job_id: str, lines: list[str]) -> list[LogEntry]:
    """What Cloud Logging makes of lines a process prints on stdout: INFO text entries."""
    return [LogEntry(insert_id=f"oom-{i}", timestamp=T0 + timedelta(milliseconds=i),
                     severity=INFO, job_id=job_id, task_name="workerpool0-0", text_payload=line)
            for i, line in enumerate(lines)]


def fail(job: Job, backend: FakeBackend, message: str, code: int = 3) -> None:
    lifecycle.submit(job.pk)
    attempt = job.current_attempt()
    backend.set_state(attempt.vertex_name, "JOB_STATE_FAILED", end_time=timezone.now(),
                      error_code=code, error_message=message)
    lifecycle.reconcile(job.pk)


def oom_job(make_job: Callable[..., Job], backend: FakeBackend) -> Job:
    job = make_job("llama")
    lifecycle.submit(job.pk)
    attempt = job.current_attempt()
    store.store_entries(print_on_stdout(attempt.vertex_job_id, OOM_TRACEBACK.splitlines()),
                        {attempt.vertex_job_id: store.Target(job.pk, 1)})
    backend.set_state(attempt.vertex_name, "JOB_STATE_FAILED", end_time=timezone.now(),
                      error_code=3, error_message="The replica workerpool0-0 exited with a "
                                                  "non-zero status of 1.")
    lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    assert job.state == "FAILED"
    return job


def test_an_oom_traceback_printed_at_info_is_diagnosed(make_job: Callable[..., Job],
                                                       backend: FakeBackend) -> None:
    job = oom_job(make_job, backend)
    kinds = set(LogFailure.objects.filter(job=job).values_list("kind", flat=True))
    assert kinds == {"gpu_oom", "replica_exit"}
    oom = LogFailure.objects.get(job=job, kind="gpu_oom")
    assert "CUDA out of memory" in oom.summary and "in backward" in oom.last_frame


def test_a_traceback_split_across_pages_is_read_whole(make_job: Callable[..., Job]) -> None:
    # The second page starts inside the traceback: the store reads the lines stored before
    # it, and every line of the page is scanned while the traceback lasts (not only the
    # lines that name a failure's words).
    job = make_job("llama")
    lifecycle.submit(job.pk)
    attempt = job.current_attempt()
    targets = {attempt.vertex_job_id: store.Target(job.pk, 1)}
    page = print_on_stdout(attempt.vertex_job_id,
                           ["loading shards", "shards loaded", *OOM_TRACEBACK.splitlines()])
    store.store_entries(page[:5], targets)
    store.store_entries(page[5:], targets)
    oom = LogFailure.objects.get(job=job, kind="gpu_oom")
    assert "CUDA out of memory" in oom.summary and "in backward" in oom.last_frame


def test_the_headline_is_in_the_header_the_list_and_the_api(
        make_job: Callable[..., Job], backend: FakeBackend, client: Client,
        admin_user: Any) -> None:
    job = oom_job(make_job, backend)
    client.force_login(admin_user)
    header = client.get(f"/jobs/{job.pk}/partials/header/").content.decode()
    assert "GPU out of memory" in header and "Lower the per-device batch size" in header
    # The named cause leads; Vertex's own words follow it, not the other way round.
    assert header.index("GPU out of memory") < header.index("non-zero status of 1")
    rows = client.get("/").content.decode()
    assert "row-diagnosis" in rows and "GPU out of memory: torch.OutOfMemoryError" in rows
    detail = client.get(f"/api/v1/jobs/{job.pk}/").json()
    assert detail["diagnosis"]["kind"] == "gpu_oom"
    assert detail["diagnosis"]["fix"].startswith("Lower the per-device batch size")
    listed = client.get("/api/v1/jobs/").json()["results"][0]
    assert listed["diagnosis"]["title"] == "GPU out of memory"


def test_a_page_of_failed_jobs_reads_their_headlines_in_one_query(
        make_job: Callable[..., Job], backend: FakeBackend, client: Client, admin_user: Any,
        django_assert_max_num_queries: Any, settings: Any) -> None:
    # No rate limit: its first request of each minute also clears the last minute's counter,
    # one more query whenever a minute turns between the two counts below.
    settings.CP_API_RATE_USER = ""
    # Two causes on two jobs, and a failed job with no failure recorded: each row its own.
    oom = oom_job(make_job, backend)
    pulled = make_job("pulled")
    fail(pulled, backend, "Unable to pull the image us-docker.pkg.dev/p/r/x:1: manifest "
                          "unknown")
    silent = make_job("silent")
    lifecycle.submit(silent.pk)
    Job.objects.filter(pk=silent.pk).update(state="FAILED")
    client.force_login(admin_user)

    listed = {j["id"]: j["diagnosis"] for j in client.get("/api/v1/jobs/").json()["results"]}
    assert listed[oom.pk]["kind"] == "gpu_oom"
    assert listed[pulled.pk]["kind"] == "image_pull"
    assert listed[silent.pk] is None
    jobs = list(Job.objects.all())
    assert queries.headlines(jobs) == {j.pk: h for j in jobs if (h := queries.headline(j))}
    # More failed rows do not mean more queries.
    before = len(_queries_of(client, "/api/v1/jobs/"))
    for i in range(5):
        fail(make_job(f"more-{i}"), backend, "The replica workerpool0-0 exited with a "
                                            "non-zero status of 1.")
    with django_assert_max_num_queries(before):
        client.get("/api/v1/jobs/")
    rows = client.get("/").content.decode()
    assert rows.count("row-diagnosis") >= 7


def _queries_of(client: Client, path: str) -> list[dict[str, Any]]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        client.get(path)
    return captured.captured_queries


def test_custom_job_error_alone_is_classified(make_job: Callable[..., Job],
                                              backend: FakeBackend) -> None:
    pulled = make_job("a")
    fail(pulled, backend, "Unable to pull the image us-docker.pkg.dev/p/r/x:1: manifest "
                          "unknown")
    assert LogFailure.objects.get(job=pulled).kind == "image_pull"
    quota = make_job("b")
    fail(quota, backend, "The following quota metrics exceed quota limits: "
                         "aiplatform.googleapis.com/custom_model_training_nvidia_a100_gpus", 8)
    assert LogFailure.objects.get(job=quota).kind == "quota_exceeded"
    exited = make_job("c")
    fail(exited, backend, "The replica workerpool0-0 exited with a non-zero status of 1.")
    headline = queries.headline(Job.objects.get(pk=exited.pk))
    assert headline["kind"] == "replica_exit" and "log of the replica" in headline["fix"]


def test_a_cancel_the_user_asked_for_reads_as_a_cancel(
        make_job: Callable[..., Job], backend: FakeBackend, client: Client,
        admin_user: Any) -> None:
    job = make_job("bert")
    lifecycle.submit(job.pk)
    client.force_login(admin_user)
    client.post(f"/jobs/{job.pk}/cancel/")
    lifecycle.send_cancel(job.pk)
    name = job.current_attempt().vertex_name
    backend.set_state(name, "JOB_STATE_CANCELLED", end_time=timezone.now(), error_code=1,
                      error_message="CustomJob cancelled by the user.")
    lifecycle.reconcile(job.pk)
    header = client.get(f"/jobs/{job.pk}/partials/header/").content.decode()
    assert f"Cancelled on request by {admin_user.username}" in header
    assert "error-message" not in header and "diagnosis-headline" not in header
    assert client.get(f"/api/v1/jobs/{job.pk}/").json()["diagnosis"] is None
