"""A team's W&B settings: set by its admins, the key stored encrypted and never returned; jobs
receive them when submitted, the key only in the request sent to Vertex, never in anything the
product stores, shows or exports."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from controlplane.core import secrets
from controlplane.runs import lifecycle
from controlplane.runs.models import Job
from controlplane.security.models import AuditEntry
from controlplane.teams.models import TrackingSettings
from tests.runs.pages.conftest import CPU_REQUEST
from tests.security.conftest import World

URL = "/api/v1/teams/vision/tracking/"
KEY = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def admin(world: World, token_client: Callable[[Any], APIClient]) -> APIClient:
    return token_client(world.users["admin"])


@pytest.fixture
def member(world: World, token_client: Callable[[Any], APIClient]) -> APIClient:
    return token_client(world.users["member"])


def _env(pool: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in pool["containerSpec"].get("env") or []}


def test_admins_set_it_and_reads_say_only_whether_a_key_is_set(
        world: World, admin: APIClient, member: APIClient) -> None:
    assert member.get(URL).json() == {"wandb_entity": "", "wandb_project": "",
                                      "wandb_api_key_set": False}
    refused = member.patch(URL, {"wandb_project": "p"}, format="json")
    assert refused.status_code == 403
    answer = admin.patch(URL, {"wandb_entity": "acme", "wandb_project": "tiny-gpt",
                               "wandb_api_key": KEY}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json() == {"wandb_entity": "acme", "wandb_project": "tiny-gpt",
                             "wandb_api_key_set": True}
    assert KEY not in answer.content.decode()
    assert KEY not in member.get(URL).content.decode()
    row = TrackingSettings.objects.get(team=world.team)
    assert KEY not in row.wandb_api_key and secrets.decrypt(row.wandb_api_key) == KEY
    entry = AuditEntry.objects.get(action="tracking.update")
    assert entry.detail["now"]["wandb_api_key_set"] is True and KEY not in str(entry.detail)
    # Another team's admin sees nothing of it.
    outsider = APIClient()
    outsider.force_authenticate(world.users["outsider"])
    assert outsider.get(URL).status_code == 404
    # An empty key removes it.
    cleared = admin.patch(URL, {"wandb_api_key": ""}, format="json").json()
    assert cleared["wandb_api_key_set"] is False


@pytest.mark.parametrize("body, field", [
    ({"wandb_project": "p/../../x"}, "wandb_project"),
    ({"wandb_entity": "acme?x=1", "wandb_project": "p"}, "wandb_entity"),
    ({"wandb_entity": "a" * 129, "wandb_project": "p"}, "wandb_entity"),
    ({"wandb_project": "p"}, "wandb_entity"),             # a run's address needs the entity
    ({"wandb_api_key": KEY}, "wandb_project"),            # a key with nowhere to log
    ({"wandb_entity": "a", "wandb_project": "p", "wandb_api_key": "short"}, "wandb_api_key"),
    ({"wandb_entity": "a", "wandb_project": "p", "wandb_api_key": KEY + "\n$(id)"},
     "wandb_api_key"),
    ({"wandb_entity": 5, "wandb_project": "p"}, "wandb_entity"),
    ({"wandb_token": KEY}, "wandb_token"),
])
def test_bad_settings_are_refused_naming_the_field(world: World, admin: APIClient,
                                                   body: dict[str, Any], field: str) -> None:
    answer = admin.patch(URL, body, format="json")
    assert answer.status_code == 400, answer.content
    assert field in answer.json(), answer.json()
    assert not TrackingSettings.objects.filter(team=world.team).exclude(wandb_project="").exists()


def _submit(member: APIClient, backend: Any, capture: Any) -> Job:
    with capture(execute=False):
        answer = member.post("/api/v1/jobs/", {**CPU_REQUEST, "team": "vision",
                                               "env": {"WANDB_PROJECT": "mine"}}, format="json")
    assert answer.status_code == 201, answer.content
    job = Job.objects.get(pk=answer.json()["id"])
    lifecycle.submit(job.pk)
    return job


def test_jobs_get_the_settings_and_only_vertex_gets_the_key(
        world: World, admin: APIClient, member: APIClient, backend: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    admin.patch(URL, {"wandb_entity": "acme", "wandb_project": "tiny-gpt",
                      "wandb_api_key": KEY}, format="json")
    job = _submit(member, backend, django_capture_on_commit_callbacks)
    sent = backend.created[-1]
    env = _env(sent["jobSpec"]["workerPoolSpecs"][0])
    assert env["WANDB_API_KEY"] == KEY and env["WANDB_ENTITY"] == "acme"
    # What the user wrote wins over the team's default.
    assert env["WANDB_PROJECT"] == "mine"

    stored = job.attempts.get().submitted_spec
    assert KEY not in str(stored) and KEY not in str(job.custom_job)
    assert _env(stored["jobSpec"]["workerPoolSpecs"][0])["WANDB_ENTITY"] == "acme"

    client = Client()
    client.force_login(world.users["member"])
    seen = [
        client.get(reverse("job-detail", args=[job.pk])),
        member.get(f"/api/v1/jobs/{job.pk}/"),
        member.get(f"/api/v1/jobs/{job.pk}/attempts/"),
        member.get(f"/api/v1/jobs/{job.pk}/events/"),
        member.get("/api/v1/jobs/"),
        *(member.get(f"/api/v1/jobs/{job.pk}/export/?fmt={fmt}")
          for fmt in ("yaml", "json", "python")),
        *(client.get(reverse("job-export", args=[job.pk, fmt]))
          for fmt in ("yaml", "json", "python")),
        member.get(URL),
        admin.get("/api/v1/teams/vision/audit/"),
    ]
    for response in seen:
        assert response.status_code == 200, (response.status_code, response.content[:300])
        assert KEY not in response.content.decode()


def test_without_a_key_jobs_log_offline(world: World, admin: APIClient, member: APIClient,
                                        backend: Any,
                                        django_capture_on_commit_callbacks: Any) -> None:
    admin.patch(URL, {"wandb_entity": "acme", "wandb_project": "tiny-gpt"}, format="json")
    _submit(member, backend, django_capture_on_commit_callbacks)
    env = _env(backend.created[-1]["jobSpec"]["workerPoolSpecs"][0])
    assert env["WANDB_MODE"] == "offline" and "WANDB_API_KEY" not in env


def test_without_settings_jobs_carry_no_wandb_variables(
        world: World, member: APIClient, backend: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    with django_capture_on_commit_callbacks(execute=False):
        answer = member.post("/api/v1/jobs/", {**CPU_REQUEST, "team": "vision"}, format="json")
    lifecycle.submit(answer.json()["id"])
    env = _env(backend.created[-1]["jobSpec"]["workerPoolSpecs"][0])
    assert not any(name.startswith("WANDB_") for name in env)


def test_the_page_says_set_or_not_set_and_never_shows_the_key(world: World) -> None:
    page = reverse("team-tracking", args=["vision"])
    admin = Client()
    admin.force_login(world.users["admin"])
    saved = admin.post(page, {"wandb_entity": "acme", "wandb_project": "tiny-gpt",
                              "wandb_api_key": KEY})
    assert saved.status_code == 302
    html = admin.get(page).content.decode()
    assert 'data-field="wandb_api_key_set">set<' in html and KEY not in html
    # Saving again with the key field empty keeps the key.
    admin.post(page, {"wandb_entity": "acme", "wandb_project": "other"})
    row = TrackingSettings.objects.get(team=world.team)
    assert row.wandb_project == "other" and secrets.decrypt(row.wandb_api_key) == KEY

    hostile = admin.post(page, {"wandb_entity": '"><script>alert(1)</script>',
                                "wandb_project": "p", "wandb_api_key": KEY})
    assert hostile.status_code == 400
    text = hostile.content.decode()
    assert "wandb_entity" in text and "<script>alert(1)" not in text and KEY not in text

    member = Client()
    member.force_login(world.users["member"])
    assert 'data-field="wandb_api_key_set">set<' in member.get(page).content.decode()
    assert member.post(page, {"wandb_entity": "x", "wandb_project": "y"}).status_code == 403
    admin.post(page, {"wandb_entity": "acme", "wandb_project": "other", "remove_key": "1"})
    assert 'data-field="wandb_api_key_set">not set<' in member.get(page).content.decode()


def test_a_key_that_cannot_be_decrypted_leaves_jobs_logging_offline(
        world: World, admin: APIClient, member: APIClient, backend: Any, settings: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    settings.CP_ENCRYPTION_KEY = "the key the settings were saved with"
    admin.patch(URL, {"wandb_entity": "acme", "wandb_project": "tiny-gpt",
                      "wandb_api_key": KEY}, format="json")
    settings.CP_ENCRYPTION_KEY = "another key"
    _submit(member, backend, django_capture_on_commit_callbacks)
    env = _env(backend.created[-1]["jobSpec"]["workerPoolSpecs"][0])
    assert env["WANDB_MODE"] == "offline" and "WANDB_API_KEY" not in env
