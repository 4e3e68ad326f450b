"""The job list as a dashboard: name search, sort by any column, duration, accelerator
families, running jobs first; the compare boxes."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Team


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
