"""The audit log records who submitted, cancelled and resubmitted jobs and who changed
templates and channels; only a team's admins read it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from controlplane.runs.models import Job
from controlplane.security.models import AuditEntry
from tests.security.conftest import World

BODY = {"name": "exp", "team": "vision", "chief": {"machine_type": "n1-standard-4"},
        "workers": {"replica_count": 1}, "args": ["--preset", "tiny"]}


@pytest.fixture
def quiet(django_capture_on_commit_callbacks: Any) -> Any:
    """Submissions are queued on commit: capture them instead of reaching a broker."""
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        yield callbacks


def _log(world: World) -> list[tuple[str, str, str, str]]:
    return [(e.actor_name, e.action, e.target_type, e.via)
            for e in AuditEntry.objects.filter(team=world.team).order_by("at", "id")]


def test_job_actions_through_the_api_are_recorded_with_the_token(
        world: World, backend: Any, quiet: Any, token_client: Callable[[Any], APIClient],
        checkpoint_storage: Callable[[str], str]) -> None:
    api = token_client(world.users["member"])
    prefix = world.users["member"].api_tokens.get().prefix
    made = api.post("/api/v1/jobs/", BODY, format="json")
    assert made.status_code == 201, made.content
    job_id = made.json()["id"]
    assert api.get(f"/api/v1/jobs/{job_id}/clone/").status_code == 200
    Job.objects.get(pk=job_id).events.create(
        kind="checkpoint_saved", attempt=1, step=10,
        data={"step": 10, "path": checkpoint_storage("gs://b/s-10")})
    resubmitted = api.post(f"/api/v1/jobs/{job_id}/resubmit/", {}, format="json")
    assert resubmitted.status_code == 201, resubmitted.content
    assert api.post(f"/api/v1/jobs/{job_id}/cancel/").status_code == 202
    # A refused action leaves no entry.
    assert api.post(f"/api/v1/jobs/{job_id}/cancel/").status_code == 409

    via = f"token {prefix}"
    # Reading the job's request (clone) is a GET: no entry (issue 40).
    assert _log(world) == [("ann", "job.submit", "job", via),
                           ("ann", "job.resubmit", "job", via),
                           ("ann", "job.cancel", "job", via)]
    resubmit = AuditEntry.objects.get(action="job.resubmit")
    assert resubmit.target_id == str(resubmitted.json()["id"])
    assert resubmit.detail == {"from_job": job_id, "step": 10}


def test_page_actions_are_recorded(client: Client, world: World, backend: Any, quiet: Any,
                                   make_job: Callable[..., Job]) -> None:
    client.force_login(world.users["member"])
    job = make_job(world.team, world.users["member"], name="running")
    assert client.post(f"/jobs/{job.pk}/cancel/").status_code == 302
    assert client.get(f"/jobs/new/?clone={job.pk}").status_code == 200
    assert _log(world) == [("ann", "job.cancel", "job", "web")]


def test_template_and_channel_changes_are_recorded(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    api = token_client(world.users["admin"])
    template = api.post("/api/v1/templates/", {"name": "base", "request": BODY}, format="json")
    assert template.status_code == 201, template.content
    assert api.delete(f"/api/v1/templates/{template.json()['id']}/").status_code == 204
    channels = f"/api/v1/teams/{world.team.slug}/channels/"
    channel = api.post(channels, {"name": "ops", "kind": "webhook", "notify_on": ["failed"],
                                  "webhook_url": "https://hooks.slack.com/services/T/B/xyzxyzxyz"},
                       format="json")
    assert channel.status_code == 201, channel.content
    url = f"{channels}{channel.json()['id']}/"
    assert api.patch(url, {"enabled": False}, format="json").status_code == 200
    assert api.delete(url).status_code == 204
    actions = [a for _, a, _, _ in _log(world)]
    assert actions == ["template.save", "template.delete", "channel.create", "channel.update",
                       "channel.delete"]
    update = AuditEntry.objects.get(action="channel.update")
    assert update.detail == {"fields": ["enabled"]} and update.target_name == "ops"


def test_only_the_teams_admins_read_its_audit_log(
        client: Client, world: World, backend: Any, quiet: Any,
        token_client: Callable[[Any], APIClient]) -> None:
    member = token_client(world.users["member"])
    assert member.post("/api/v1/jobs/", BODY, format="json").status_code == 201
    url = f"/api/v1/teams/{world.team.slug}/audit/"

    entries = token_client(world.users["admin"]).get(url).json()["results"]
    assert [(e["actor"], e["action"], e["team"]) for e in entries] == [
        ("ann", "job.submit", "vision")]
    assert member.get(url).status_code == 403
    assert token_client(world.users["viewer"]).get(url).status_code == 403
    assert token_client(world.users["outsider"]).get(url).status_code == 404

    client.force_login(world.users["admin"])
    page = client.get(f"/teams/{world.team.slug}/audit/")
    assert page.status_code == 200 and b"job.submit" in page.content
    client.force_login(world.users["member"])
    assert client.get(f"/teams/{world.team.slug}/audit/").status_code == 403


def test_audit_log_filters(world: World, backend: Any, quiet: Any,
                           token_client: Callable[[Any], APIClient]) -> None:
    member = token_client(world.users["member"])
    job = member.post("/api/v1/jobs/", BODY, format="json").json()
    member.post(f"/api/v1/jobs/{job['id']}/cancel/")
    admin = token_client(world.users["admin"])
    url = f"/api/v1/teams/{world.team.slug}/audit/"
    cancels = admin.get(url, {"action": "job.cancel"}).json()["results"]
    assert [e["action"] for e in cancels] == ["job.cancel"]
    assert admin.get(url, {"actor": "ada"}).json()["results"] == []
    assert admin.get(url, {"since": "2999-01-01T00:00:00Z"}).json()["results"] == []
    assert admin.get(url, {"since": "yesterday"}).status_code == 400
    assert admin.get(url, {"action": "job.explode"}).status_code == 400


def test_budget_changes_are_recorded(client: Client, world: World,
                                     token_client: Callable[[Any], APIClient]) -> None:
    api = token_client(world.users["admin"])
    url = f"/api/v1/teams/{world.team.slug}/budget/"
    saved = api.put(url, {"monthly_budget_micros": 250_000_000, "on_exceed": "notify"},
                    format="json")
    assert saved.status_code == 200, saved.content
    assert api.delete(url).status_code == 204
    # Deleting what is not there changes nothing and records nothing.
    assert api.delete(url).status_code == 204
    entries = list(AuditEntry.objects.filter(team=world.team).order_by("id"))
    assert [(e.actor_name, e.action) for e in entries] == [("ada", "budget.update"),
                                                          ("ada", "budget.delete")]
    assert entries[0].detail == {"monthly_micros": 250_000_000, "on_exceed": "notify"}


def test_audit_page_filters_and_pages(client: Client, world: World, backend: Any, quiet: Any,
                                      token_client: Callable[[Any], APIClient]) -> None:
    member = token_client(world.users["member"])
    for n in range(3):
        job = member.post("/api/v1/jobs/", {**BODY, "name": f"exp-{n}"}, format="json").json()
    member.post(f"/api/v1/jobs/{job['id']}/cancel/")
    client.force_login(world.users["admin"])
    url = f"/teams/{world.team.slug}/audit/"
    page = client.get(url, {"action": "job.cancel"}).content.decode()
    assert page.count("<td class=\"mono\">job.cancel</td>") == 1 and "job.submit</td>" not in page
    assert 'option value="job.submit"' in page and "1 entry" in page
    assert "exp-2" in client.get(url, {"q": "exp-2"}).content.decode()
    assert "Nothing matches" in client.get(url, {"actor": "nobody"}).content.decode()
    assert "Nothing matches" in client.get(url, {"since": "2999-01-01"}).content.decode()
    bad = client.get(url, {"until": "yesterday"})
    assert bad.status_code == 200 and "until: a date as YYYY-MM-DD" in bad.content.decode()
    from controlplane.security import views

    views.AUDIT_PAGE, saved = 2, views.AUDIT_PAGE
    try:
        paged = client.get(url, {"action": "job.submit", "page": 2}).content.decode()
    finally:
        views.AUDIT_PAGE = saved
    assert "page 2 of 2" in paged and "action=job.submit" in paged
