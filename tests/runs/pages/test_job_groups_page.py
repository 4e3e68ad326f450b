"""The jobs page grouped (?group_by=): one row a group after the page's filters, opening to its
newest jobs, with its states, losses, cost in dollars, running time and GPU-hours, a link
listing its jobs and a Compare link; a bad group_by is said and the list shown ungrouped;
trials group by sweep; the page's queries do not grow with the groups."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from controlplane.runs.models import Job, JobKind, JobState
from controlplane.teams.models import Team
from tests.runs.pages.test_job_list_dashboard import names_in


def groups_in(page: str) -> list[str]:
    return re.findall(r'<details class="group-row" data-group="([^"]*)">', page)


def test_the_page_groups_by_a_tag_after_its_filters(member_client: Client, member: Any,
                                                    team: Team,
                                                    make_job: Callable[..., Job]) -> None:
    a1 = make_job(team, member, name="a1", state=JobState.SUCCEEDED, tags={"exp": "warmup"},
                  last_loss=1.25, cost_micros=1_500_000)
    a2 = make_job(team, member, name="a2", state=JobState.FAILED, tags={"exp": "warmup"},
                  last_loss=2.0, cost_micros=2_250_000)
    make_job(team, member, name="b1", state=JobState.SUCCEEDED, tags={"exp": "long"})
    make_job(team, member, name="c1", state=JobState.RUNNING)
    # a1 ran 2 replicas of 4 GPUs for 45 minutes: 6 GPU-hours; the others are CPU jobs.
    Job.objects.filter(pk=a1.pk).update(
        custom_job={"jobSpec": {"workerPoolSpecs": [
            {"machineSpec": {"acceleratorCount": 4}, "replicaCount": "2"}]}},
        started_at=timezone.now() - timedelta(hours=1),
        ended_at=timezone.now() - timedelta(minutes=15))
    url = reverse("job-list")
    page = member_client.get(url, {"group_by": "tag:exp"}).content.decode()
    assert groups_in(page) == ["warmup", "long", ""]
    assert 'name="group_by" value="tag:exp"' in page
    assert 'id="job-table"' not in page  # groups instead of rows
    warmup = page.split('data-group="warmup"')[1].split("</details>")[0]
    assert "2 jobs" in warmup and "1 SUCCEEDED" in warmup and "1 FAILED" in warmup
    assert "1.2500" in warmup and "1.6250" in warmup and "$3.75" in warmup
    assert re.search(r'class="group-gpu-hours"[^>]*>6\.0 GPU-h<', warmup), warmup
    long = page.split('data-group="long"')[1].split("</details>")[0]
    assert re.search('class="group-gpu-hours"[^>]*>\N{EN DASH}<', long), long
    assert names_in(warmup) == ["a2", "a1"]
    compare = html.unescape(re.search(r'class="compare-group" href="([^"]+)"', warmup)[1])
    assert compare == f"{reverse('job-compare')}?ids={a2.pk}%2C{a1.pk}"
    # Its link lists its jobs, the page's filters kept.
    listing = html.unescape(re.search(r'<a href="([^"]+)">list its jobs</a>', warmup)[1])
    assert sorted(names_in(member_client.get(listing).content.decode())) == ["a1", "a2"]
    # Filters first: the failed jobs alone.
    page = member_client.get(url, {"group_by": "tag:exp", "state": "FAILED"}).content.decode()
    assert groups_in(page) == ["warmup"]
    # The Group by field offers the tag keys of the jobs shown.
    page = member_client.get(url).content.decode()
    assert '<option value="tag:exp">' in page and '<option value="sweep">' in page


def test_a_bad_group_by_is_said_and_the_list_shown(member_client: Client, member: Any,
                                                   team: Team,
                                                   make_job: Callable[..., Job]) -> None:
    make_job(team, member, name="a1", tags={"exp": "x"})
    page = member_client.get(reverse("job-list"),
                             {"group_by": "tag:<script>"}).content.decode()
    error = html.unescape(re.search(r'id="filter-error">([^<]*)<', page)[1])
    assert error.startswith("Filter not applied: group_by: 'tag:<script>': write tag:KEY")
    assert "write tag:KEY" in error and "<script>" not in page
    assert names_in(page) == ["a1"] and not groups_in(page)


def test_trials_group_by_sweep_in_a_constant_number_of_queries(
        member_client: Client, member: Any, team: Team) -> None:
    def trial(sweep: int, n: int) -> None:
        Job.objects.create(team=team, created_by=member, name=f"s{sweep}-t{n}",
                           kind=JobKind.TRIAL, request={"sweep": sweep, "trial": str(n)},
                           custom_job={}, project="p", region="us-central1")

    def queries() -> tuple[int, str]:
        with CaptureQueriesContext(connection) as captured:
            answer = member_client.get(reverse("job-list"), {"group_by": "sweep"})
        assert answer.status_code == 200
        return len(captured.captured_queries), answer.content.decode()

    trial(1, 0)
    member_client.get(reverse("job-list"))  # the session's first-request housekeeping
    few, page = queries()
    assert groups_in(page) == ["1"]
    for sweep in range(2, 12):
        trial(sweep, 0)
        trial(sweep, 1)
    many, page = queries()
    assert len(groups_in(page)) == 11 and many == few
