"""The job list as a dashboard: name search, sort by any column, duration, accelerator
families, running jobs first, failure reasons with their fix; the compare boxes."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from controlplane.logs.models import LogFailure
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Team
from tests.runs.pages.conftest import CPU_CUSTOM_JOB
from vertexplan.summaries import accelerator_summary


def names_in(html: str) -> list[str]:
    return re.findall(r'<a href="/jobs/\d+/">([^<]+)</a>', html)


def test_running_jobs_come_first_then_newest(member_client: Client, member: Any, team: Team,
                                             make_job: Callable[..., Job]) -> None:
    make_job(team, member, name="old-running", state=JobState.RUNNING)
    make_job(team, member, name="new-done", state=JobState.SUCCEEDED)
    make_job(team, member, name="newest-failed", state=JobState.FAILED)
    html = member_client.get(reverse("job-list")).content.decode()
    assert names_in(html) == ["old-running", "newest-failed", "new-done"]


def test_search_sort_and_duration(member_client: Client, member: Any, team: Team,
                                  make_job: Callable[..., Job]) -> None:
    now = timezone.now()
    make_job(team, member, name="bert-long", state=JobState.SUCCEEDED, cost_micros=5,
             started_at=now - timedelta(hours=3), ended_at=now - timedelta(minutes=55))
    make_job(team, member, name="bert-short", state=JobState.SUCCEEDED, cost_micros=9,
             started_at=now - timedelta(minutes=10), ended_at=now - timedelta(minutes=9))
    make_job(team, member, name="gpt", state=JobState.QUEUED)
    url = reverse("job-list")
    html = member_client.get(url, {"q": "BERT"}).content.decode()
    assert sorted(names_in(html)) == ["bert-long", "bert-short"]
    assert "2 h 05 min" in html and "60 s" in html
    by_cost = member_client.get(url, {"sort": "-cost", "q": "bert"}).content.decode()
    assert names_in(by_cost) == ["bert-short", "bert-long"]
    assert 'aria-sort="descending"' in by_cost
    by_duration = member_client.get(url, {"sort": "duration", "q": "bert"}).content.decode()
    assert names_in(by_duration) == ["bert-short", "bert-long"]
    # A header sorts the other way when the list is already sorted by it.
    assert "sort=cost" in by_cost
    # An unknown column or a hostile value: the default order, never an error.
    assert member_client.get(url, {"sort": "password; drop"}).status_code == 200


def test_accelerator_family_filter(member_client: Client, member: Any, team: Team,
                                   make_job: Callable[..., Job]) -> None:
    cpu = make_job(team, member, name="cpu-only")
    a100 = make_job(team, member, name="a100-80")
    Job.objects.filter(pk=a100.pk).update(request={
        **a100.request, "chief": {"machine_type": "a2-ultragpu-1g",
                                  "accelerator_type": "NVIDIA_A100_80GB",
                                  "accelerator_count": 1}})
    url = reverse("job-list")
    assert names_in(member_client.get(url, {"family": "a100"}).content.decode()) == ["a100-80"]
    assert names_in(member_client.get(url, {"family": "CPU"}).content.decode()) == [cpu.name]
    assert names_in(member_client.get(url, {"family": "H100"}).content.decode()) == []
    html = member_client.get(url, {"family": "nonsense"}).content.decode()
    assert sorted(names_in(html)) == ["a100-80", "cpu-only"]


def test_rows_have_compare_boxes_that_survive_the_poll(member_client: Client, member: Any,
                                                       team: Team,
                                                       make_job: Callable[..., Job]) -> None:
    job = make_job(team, member, name="to-compare")
    html = member_client.get(reverse("job-list")).content.decode()
    assert f'id="compare-{job.pk}" hx-preserve="true"' in html
    assert 'form="compare-form"' in html and 'id="compare-form"' in html


def with_accelerator(job: Job, machine: str, kind: str | None, count: int) -> None:
    pool = {**CPU_CUSTOM_JOB["jobSpec"]["workerPoolSpecs"][0],
            "machineSpec": {"machineType": machine,
                            **({"acceleratorType": kind, "acceleratorCount": count}
                               if kind else {})}}
    Job.objects.filter(pk=job.pk).update(custom_job={
        **CPU_CUSTOM_JOB, "jobSpec": {**CPU_CUSTOM_JOB["jobSpec"], "workerPoolSpecs": [pool]}})


def test_the_accelerators_column_sorts(member_client: Client, member: Any, team: Team,
                                       make_job: Callable[..., Job]) -> None:
    with_accelerator(make_job(team, member, name="t4x8"), "n1-standard-32", "NVIDIA_TESLA_T4", 8)
    with_accelerator(make_job(team, member, name="cpu"), "n1-standard-4", None, 0)
    with_accelerator(make_job(team, member, name="a100x1"), "a2-highgpu-1g",
                     "NVIDIA_TESLA_A100", 1)
    with_accelerator(make_job(team, member, name="t4x2"), "n1-standard-8", "NVIDIA_TESLA_T4", 2)
    url = reverse("job-list")
    up = member_client.get(url, {"sort": "accelerators"}).content.decode()
    # By type, then by how many (2 before 8, as numbers); a CPU job has none and comes last.
    assert names_in(up) == ["a100x1", "t4x2", "t4x8", "cpu"]
    assert 'aria-sort="ascending"' in up and "sort=-accelerators" in up
    down = member_client.get(url, {"sort": "-accelerators"}).content.decode()
    assert names_in(down) == ["t4x8", "t4x2", "a100x1", "cpu"]


def test_a_failed_row_says_why_and_what_to_do(member_client: Client, member: Any, team: Team,
                                              make_job: Callable[..., Job]) -> None:
    make_job(team, member, name="refused", state=JobState.FAILED,
             error_message="Vertex refused the job: " + "the image is private. " * 20)
    oom = make_job(team, member, name="oom", state=JobState.FAILED, error_message="exit 1")
    LogFailure.objects.create(job=oom, kind="gpu_oom", timestamp=timezone.now(),
                              summary="torch.OutOfMemoryError: CUDA out of memory",
                              insert_id="f1")
    make_job(team, member, name="fine", state=JobState.SUCCEEDED, error_message="not shown")
    html = member_client.get(reverse("job-list")).content.decode()
    rows = {name: row for row in html.split("<tr>")[1:] for name in names_in(row)}
    # Nothing recognised in its logs: Vertex's own words, shortened, with the whole on hover.
    shown = re.search(r'<div class="row-diagnosis small" title="[^"]*">([^<]*)</div>',
                      rows["refused"])
    assert shown and shown.group(1).startswith("Vertex refused the job: the image is private.")
    assert len(shown.group(1)) <= 120
    # A recognised cause: its fix is in the row's text, not only in a tooltip.
    visible = re.sub(r'title="[^"]*"', "", rows["oom"])
    assert "GPU out of memory: torch.OutOfMemoryError" in visible
    # The fix names the change to this job's request, as its page does (runs/fix_line.py).
    assert "Fix: turn on model.activation_checkpointing" in visible and "exit 1" not in visible
    assert "row-diagnosis" not in rows["fine"] and "not shown" not in rows["fine"]


def test_more_rows_ask_no_more_queries(member_client: Client, member: Any, team: Team,
                                       make_job: Callable[..., Job]) -> None:
    """Each row's diagnosis, team, submitter and accelerators come with the page's queries
    (nothing a row shows is left to be read row by row)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert member_client.get(reverse("job-list")).status_code == 200
        return len(captured.captured_queries)

    first = make_job(team, member, name="first", state=JobState.FAILED)
    # A diagnosed row: its fix reads the page's diagnosed requests (one query for them all).
    LogFailure.objects.create(job=first, attempt=1, kind="gpu_oom", summary="OOM",
                              timestamp=timezone.now(), insert_id="first")
    before = queries()
    for i in range(6):
        job = make_job(team, member, name=f"more-{i}",
                       state=JobState.FAILED if i % 2 else JobState.SUCCEEDED)
        LogFailure.objects.create(job=job, attempt=1, kind="gpu_oom", summary="OOM",
                                  timestamp=timezone.now(), insert_id=f"f{i}")
    html = member_client.get(reverse("job-list")).content.decode()
    assert "GPU out of memory" in html
    assert accelerator_summary(CPU_CUSTOM_JOB) in html  # read from the CustomJob, per row
    assert queries() == before
