"""Ray jobs in the jobs list: a row each, beside the jobs, with its state and a link to its
cluster; the kind menu shows them alone or hides them, the other filters apply to them, the
count is theirs too, and more Ray jobs on a page ask no more queries."""

from __future__ import annotations

import html
import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from controlplane.clusters import lifecycle
from controlplane.clusters.models import Cluster
from controlplane.runs.models import Job
from tests.clusters.test_api import running

pytestmark = pytest.mark.django_db


def rows(page: str) -> dict[str, str]:
    """Each row of the list by the name it links to."""
    found = {}
    for row in re.findall(r"<tr>(.*?)</tr>", page, re.S):
        name = re.search(r'<a href="/jobs/\d+/">([^<]+)</a>', row)
        if name:
            found[html.unescape(name[1])] = row
    return found


def listed(client: Client, **query: str) -> dict[str, str]:
    return rows(client.get(reverse("job-list"), query).content.decode())


@pytest.fixture
def ray_jobs(member: Any, queued: list, ray: Any) -> tuple[Cluster, list[Job]]:
    """A running cluster named by a hostile user, one Ray job running on it and one queued,
    and one job submitted as a job."""
    cluster = running(member)
    Cluster.objects.filter(pk=cluster.pk).update(name="<b>ray-a</b>")
    first = lifecycle.submit_ray_job(cluster=cluster, user=member,
                                     entrypoint=["python", "-m", "trainers.ray_train"])
    lifecycle.advance_ray_job(first.pk)  # Ray says RUNNING
    second = lifecycle.submit_ray_job(cluster=cluster, user=member, entrypoint=["python", "x.py"])
    Job.objects.create(team=cluster.team, created_by=member, name="plain", request={},
                       custom_job={}, project="p", region="us-central1")
    return cluster, [Job.objects.get(pk=first.job_id), Job.objects.get(pk=second.job_id)]


def test_ray_jobs_are_rows_of_the_list_with_their_cluster(
        ray_jobs: tuple[Cluster, list[Job]], member: Any, client: Client) -> None:
    cluster, (running_job, queued_job) = ray_jobs
    client.force_login(member)
    page = client.get(reverse("job-list")).content.decode()
    found = rows(page)
    assert set(found) == {running_job.name, queued_job.name, "plain"}
    row = found[running_job.name]
    assert "state-running" in row and "state-queued" in found[queued_job.name]
    link = re.search(r'<div class="row-origin small" data-origin="ray"><a href="([^"]+)">'
                     r"([^<]+)</a>", row)
    assert link and link[1] == reverse("clusters-detail", args=[cluster.pk])
    # The cluster's name as text, never as markup.
    assert html.unescape(link[2]).endswith("on cluster <b>ray-a</b>") and "<b>ray-a" not in page
    assert "row-origin" not in found["plain"]


@pytest.mark.parametrize(("query", "names"), [
    ({"kind": "ray"}, {"ray-running", "ray-queued"}),
    ({"kind": "job"}, {"plain"}),
    ({"kind": "all"}, {"ray-running", "ray-queued", "plain"}),
    ({"state": "RUNNING"}, {"ray-running"}),
    ({"kind": "ray", "state": "QUEUED"}, {"ray-queued"}),
    ({"kind": "nonsense"}, {"ray-running", "ray-queued", "plain"}),
])
def test_the_kind_menu_and_the_filters_apply_to_ray_jobs(
        ray_jobs: tuple[Cluster, list[Job]], member: Any, client: Client,
        query: dict[str, str], names: set[str]) -> None:
    _, (running_job, queued_job) = ray_jobs
    Job.objects.filter(pk=running_job.pk).update(name="ray-running")
    Job.objects.filter(pk=queued_job.pk).update(name="ray-queued")
    client.force_login(member)
    assert set(listed(client, **query)) == names
    page = client.get(reverse("job-list"), query).content.decode()
    assert '<select name="kind">' in page
    if query.get("kind") in ("ray", "job", "all"):
        assert f'<option value="{query["kind"]}" selected>' in page


def test_the_count_includes_ray_jobs(ray_jobs: tuple[Cluster, list[Job]], member: Any,
                                     client: Client) -> None:
    cluster, _ = ray_jobs
    for n in range(50):  # past one page, so the pager says the count
        Job.objects.create(team=cluster.team, created_by=member, name=f"more-{n}",
                           request={}, custom_job={}, project="p", region="us-central1")
    client.force_login(member)
    page = client.get(reverse("job-list")).content.decode()
    assert "page 1 of 2 · 53 jobs" in page
    assert "page 1 of 2 · 51 jobs" in client.get(reverse("job-list"), {"kind": "job"}) \
        .content.decode()


def test_more_ray_jobs_ask_no_more_queries(ray_jobs: tuple[Cluster, list[Job]], member: Any,
                                            client: Client) -> None:
    cluster, _ = ray_jobs
    client.force_login(member)

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(reverse("job-list")).status_code == 200
        return len(captured.captured_queries)

    before = queries()
    for n in range(4):
        lifecycle.submit_ray_job(cluster=cluster, user=member, entrypoint=["python", f"{n}.py"])
    assert len(listed(client)) == 7
    assert queries() == before


def test_another_team_sees_none_of_them(ray_jobs: tuple[Cluster, list[Job]], outsider: Any,
                                        client: Client) -> None:
    client.force_login(outsider)
    assert listed(client) == {} and listed(client, kind="ray") == {}
    assert listed(client, kind="all") == {}
