"""Who sees what: login, teams, roles."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Team


@pytest.mark.parametrize("url", [
    "/", "/jobs/new/", "/jobs/1/", "/jobs/1/metrics.json", "/jobs/1/partials/logs/",
    "/jobs/rows/",
])
def test_pages_redirect_to_login(client: Client, db: None, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login") + "?next=")


def test_login_page_renders(client: Client, db: None) -> None:
    response = client.get(reverse("login"))
    assert response.status_code == 200
    assert b'name="username"' in response.content


def test_job_list_shows_only_own_teams_jobs(member_client: Client, member: Any,
                                            outsider: Any, team: Team, other_team: Team,
                                            make_job: Callable[..., Job]) -> None:
    make_job(team, member, name="mine")
    make_job(other_team, outsider, name="theirs")
    response = member_client.get(reverse("job-list"))
    assert response.status_code == 200
    names = [job.name for job in response.context["jobs"]]
    assert names == ["mine"]
    assert b"theirs" not in response.content


def test_job_list_filters_and_polls_only_while_active(
        member_client: Client, member: Any, team: Team,
        make_job: Callable[..., Job]) -> None:
    make_job(team, member, name="done", state=JobState.SUCCEEDED)
    make_job(team, member, name="going", state=JobState.RUNNING)

    everything = member_client.get(reverse("job-list")).content.decode()
    assert 'hx-trigger="every 5s"' in everything
    assert "1 x n1-standard-4" in everything

    finished = member_client.get(reverse("job-list"), {"state": "SUCCEEDED"})
    assert [job.name for job in finished.context["jobs"]] == ["done"]
    assert 'hx-trigger="every 5s"' not in finished.content.decode()

    rows = member_client.get(reverse("job-list-rows"), {"state": "RUNNING"}).content.decode()
    assert rows.lstrip().startswith('<tbody id="job-rows"')
    assert "going" in rows and "done" not in rows


@pytest.mark.parametrize("name", ["job-detail", "job-metrics"])
def test_another_teams_job_is_404(member_client: Client, outsider: Any, other_team: Team,
                                  make_job: Callable[..., Job], name: str) -> None:
    job = make_job(other_team, outsider)
    assert member_client.get(reverse(name, args=[job.pk])).status_code == 404


def test_another_teams_job_partials_and_cancel_are_404(
        member_client: Client, outsider: Any, other_team: Team,
        make_job: Callable[..., Job]) -> None:
    job = make_job(other_team, outsider)
    assert member_client.get(reverse("job-partial", args=[job.pk, "logs"])).status_code == 404
    assert member_client.post(reverse("job-cancel", args=[job.pk])).status_code == 404
    assert member_client.get(f"{reverse('job-compose')}?clone={job.pk}").status_code == 404
    job.refresh_from_db()
    assert job.state == JobState.RUNNING


def test_viewer_gets_403_on_compose(viewer_client: Client) -> None:
    assert viewer_client.get(reverse("job-compose")).status_code == 403
    assert viewer_client.post(reverse("job-compose"), {"name": "x"}).status_code == 403
    assert viewer_client.post(reverse("job-validate"), {"name": "x"}).status_code == 403
    assert Job.objects.count() == 0


def test_viewer_cannot_cancel(viewer_client: Client, member: Any, team: Team,
                              make_job: Callable[..., Job]) -> None:
    job = make_job(team, member)
    page = viewer_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert reverse("job-cancel", args=[job.pk]) not in page
    assert viewer_client.post(reverse("job-cancel", args=[job.pk])).status_code == 403
    job.refresh_from_db()
    assert job.state == JobState.RUNNING


def test_member_cancels_a_job_not_yet_on_vertex(member_client: Client, member: Any,
                                                team: Team,
                                                make_job: Callable[..., Job]) -> None:
    job = make_job(team, member, state=JobState.QUEUED)
    page = member_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert reverse("job-cancel", args=[job.pk]) in page
    response = member_client.post(reverse("job-cancel", args=[job.pk]))
    assert response.status_code == 302
    assert response["Location"] == reverse("job-detail", args=[job.pk])
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED


def test_cancel_is_post_only(member_client: Client, member: Any, team: Team,
                             make_job: Callable[..., Job]) -> None:
    job = make_job(team, member)
    assert member_client.get(reverse("job-cancel", args=[job.pk])).status_code == 405


def test_log_in_and_out_through_the_forms(client: Client, team: Team, settings: Any) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    get_user_model().objects.create_user(username="lee", password="secret-pw")
    response = client.post(reverse("login"), {"username": "lee", "password": "secret-pw"})
    assert response.status_code == 302 and response["Location"] == reverse("job-list")
    page = client.get(reverse("job-list")).content.decode()
    assert "Vertex Control Plane" in page and "lee" in page
    assert f'action="{reverse("logout")}"' in page
    assert client.post(reverse("logout")).status_code == 302
    assert client.get(reverse("job-list")).status_code == 302


def test_viewer_403_page_says_why(viewer_client: Client) -> None:
    response = viewer_client.get(reverse("job-compose"))
    assert b"cannot submit" in response.content
