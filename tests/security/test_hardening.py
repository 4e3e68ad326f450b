"""Rate limits on the API and the production security settings."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from tests.security.conftest import World

# Left out of `make test-fast` (the inner loop): the server processes started.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def mid_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every request at the same instant, half-way through a minute's window: the limit counts
    a sliding window made of two fixed ones (controlplane/security/throttling.py), so requests
    that straddle a window's start would see the previous window's count weighed down (a
    schema request takes seconds on a loaded machine; seen failing so)."""
    monkeypatch.setattr(SimpleRateThrottle, "timer", lambda *_: 29_000_000 * 60 + 30.0)


def test_user_rate_limit_answers_429_with_retry_after(
        settings: Any, world: World, token_client: Callable[[Any], APIClient],
        mid_window: None) -> None:
    settings.CP_API_RATE_USER = "3/minute"
    api = token_client(world.users["viewer"])
    codes = [api.get("/api/v1/jobs/").status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    limited = api.get("/api/v1/jobs/")
    assert limited.status_code == 429
    # Half-way through a window that holds 3: a request passes once it is the previous
    # window, 30 s on (a whole number of seconds, rounded up).
    assert int(limited["Retry-After"]) in (30, 31)
    assert "throttled" in limited.json()["detail"].lower()
    # The limit is per user: another user is not held back by the first.
    assert token_client(world.users["member"]).get("/api/v1/jobs/").status_code == 200


def test_anonymous_rate_limit(settings: Any, db: None, mid_window: None) -> None:
    """Per client address, on what answers without a login (the schema); everything else
    answers 401 before any work is done."""
    settings.CP_API_RATE_ANON = "2/minute"
    api = APIClient()
    codes = [api.get("/api/schema/").status_code for _ in range(3)]
    assert codes == [200, 200, 429]


def test_rate_limits_can_be_turned_off(settings: Any, world: World,
                                       token_client: Callable[[Any], APIClient]) -> None:
    settings.CP_API_RATE_USER = ""
    api = token_client(world.users["viewer"])
    assert {api.get("/api/v1/presets/").status_code for _ in range(30)} == {200}


def _settings_in(env: dict[str, str], names: list[str]) -> dict[str, Any]:
    code = ("import json, django; django.setup(); from django.conf import settings as s; "
            f"print(json.dumps({{n: getattr(s, n, None) for n in {names!r}}}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60,
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
                               **env})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


PRODUCTION = {"DEBUG": "false", "SECRET_KEY": secrets.token_urlsafe(50),
              "SECURE_COOKIES": "", "SECURE_SSL_REDIRECT": ""}


def test_production_settings_are_secure() -> None:
    values = _settings_in(PRODUCTION, [
        "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SESSION_COOKIE_HTTPONLY",
        "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "SECURE_HSTS_INCLUDE_SUBDOMAINS",
        "SECURE_CONTENT_TYPE_NOSNIFF", "X_FRAME_OPTIONS", "SECURE_REFERRER_POLICY",
        "CP_API_RATE_USER", "CP_API_RATE_ANON"])
    assert values == {
        "SESSION_COOKIE_SECURE": True, "CSRF_COOKIE_SECURE": True,
        "SESSION_COOKIE_HTTPONLY": True, "SECURE_SSL_REDIRECT": True,
        "SECURE_HSTS_SECONDS": 31_536_000, "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_CONTENT_TYPE_NOSNIFF": True, "X_FRAME_OPTIONS": "DENY",
        "SECURE_REFERRER_POLICY": "same-origin",
        "CP_API_RATE_USER": "1200/minute", "CP_API_RATE_ANON": "120/minute",
    }


def test_django_deploy_checks_pass_in_production() -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, env={**os.environ, **PRODUCTION})
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_bad_rate_stops_the_start() -> None:
    code = "import django; django.setup()"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=60,
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings",
                               "CP_API_RATE_USER": "fast"})
    assert done.returncode != 0
    assert "CP_API_RATE_USER='fast' is not a rate" in done.stderr


@pytest.mark.parametrize("header, value", [
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "same-origin"),
])
def test_pages_send_security_headers(client: Client, db: None, header: str,
                                     value: str) -> None:
    assert client.get("/login/")[header] == value


def test_secrets_are_never_returned(world: World,
                                    token_client: Callable[[Any], APIClient]) -> None:
    """A channel's webhook goes in and never comes back out, through the API or the schema."""
    api = token_client(world.users["admin"])
    secret = "https://hooks.slack.com/services/T000/B000/abcdefghijklmnopqrstuvwx"
    made = api.post(f"/api/v1/teams/{world.team.slug}/channels/",
                    {"name": "alerts", "kind": "webhook", "webhook_url": secret,
                     "notify_on": ["failed"]}, format="json")
    assert made.status_code == 201, made.content
    listed = api.get(f"/api/v1/teams/{world.team.slug}/channels/")
    detail = api.get(f"/api/v1/teams/{world.team.slug}/channels/{made.json()['id']}/")
    for response in (made, listed, detail):
        assert secret not in response.content.decode()
        assert "abcdefghijklmnop" not in response.content.decode()


def test_a_huge_page_is_capped(world: World,
                               token_client: Callable[[Any], APIClient]) -> None:
    from controlplane.runs.models import Job
    from tests.runs.pages.conftest import CPU_CUSTOM_JOB, CPU_REQUEST

    Job.objects.bulk_create(
        Job(team=world.team, created_by=world.users["member"], name=f"exp-{n}",
            request=CPU_REQUEST, custom_job=CPU_CUSTOM_JOB, project="p", region="us-central1")
        for n in range(1003))
    page = token_client(world.users["viewer"]).get("/api/v1/jobs/?limit=100000000").json()
    assert page["count"] == 1003
    assert len(page["results"]) == 1000
    assert "limit=1000&" in page["next"] and "offset=1000" in page["next"]


def test_failed_logins_lock_the_account_out_and_a_correct_password_does_not_tell(
        world: World, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from django.contrib.auth import get_user_model

    settings.CP_LOGIN_MAX_FAILURES = 3
    user = get_user_model().objects.get(username="ann")
    user.set_password("right-password")
    user.save()
    client = Client()
    for _ in range(3):
        wrong = client.post("/login/", {"username": "ann", "password": "guess"})
        assert wrong.status_code == 200 and b"correct username and password" in wrong.content
    from django.contrib.auth import forms as auth_forms

    checked: list[str] = []
    real = auth_forms.authenticate
    monkeypatch.setattr(auth_forms, "authenticate",
                        lambda *a, **kw: checked.append(kw["username"]) or real(*a, **kw))
    locked = client.post("/login/", {"username": "ann", "password": "right-password"})
    assert locked.status_code == 429 and b"Too many failed logins" in locked.content
    assert b'value="ann"' in locked.content
    assert checked == [], "a password was checked during the lockout"
    assert "_auth_user_id" not in client.session
    # Another account from another address is not affected, and its success logs in.
    other = get_user_model().objects.get(username="vic")
    other.set_password("vic-password")
    other.save()
    elsewhere = Client(REMOTE_ADDR="10.0.0.9")
    assert elsewhere.post("/login/", {"username": "vic", "password": "vic-password"}
                          ).status_code == 302


def test_a_success_clears_the_count(world: World, settings: Any) -> None:
    from django.contrib.auth import get_user_model

    settings.CP_LOGIN_MAX_FAILURES = 3
    user = get_user_model().objects.get(username="ann")
    user.set_password("right-password")
    user.save()
    client = Client()
    for _ in range(2):
        client.post("/login/", {"username": "ann", "password": "guess"})
    assert client.post("/login/", {"username": "ann", "password": "right-password"}
                       ).status_code == 302
    client.logout()
    for _ in range(2):
        assert client.post("/login/", {"username": "ann", "password": "guess"}
                           ).status_code == 200
    assert client.post("/login/", {"username": "ann", "password": "right-password"}
                       ).status_code == 302


GIANT = 10**400  # past a float, let alone a PostgreSQL bigint


@pytest.mark.parametrize("path, body", [
    ("/api/v1/jobs/validate/", {"team": "vision", "chief": {"machine_type": "n1-standard-4",
                                                             "replica_count": GIANT}}),
    ("/api/v1/jobs/validate/", {"team": "vision", "chief": {"machine_type": "n1-standard-4",
                                                             "boot_disk_size_gb": GIANT}}),
    ("/api/v1/jobs/validate/", {"team": "vision", "chief": {"machine_type": "a2-highgpu-1g",
                                                             "accelerator_count": GIANT}}),
    ("/api/v1/jobs/validate/", {"team": "vision", "chief": {"machine_type": "n1-standard-4"},
                                "model": {"parameters": GIANT}}),
    ("/api/v1/jobs/validate/", {"team": "vision", "chief": {"machine_type": "n1-standard-4"},
                                "model": {"parameters": 7_000_000_000, "layers": GIANT,
                                          "hidden_size": GIANT, "sequence_length": GIANT}}),
    ("/api/v1/jobs/validate/", {"team": "vision", "chief": {"machine_type": "n1-standard-4"},
                                "global_batch_size": GIANT}),
    ("/api/v1/jobs/estimate/", {"team": "vision", "chief": {"machine_type": "n1-standard-4"},
                                "hours": GIANT}),
])
def test_giant_numbers_are_refused_not_a_server_error(
        world: World, token_client: Callable[[Any], APIClient], path: str, body: dict) -> None:
    api = token_client(world.users["member"])
    response = api.post(path, json.loads(json.dumps(body)), format="json")
    assert response.status_code < 500, response.content[:500]


def test_a_giant_checkpoint_step_is_refused(world: World, make_job: Callable[..., Any],
                                            token_client: Callable[[Any], APIClient]) -> None:
    job = make_job(world.team, world.users["member"], state="SUCCEEDED")
    api = token_client(world.users["member"])
    response = api.post(f"/api/v1/jobs/{job.pk}/resubmit/", {"checkpoint_step": GIANT},
                        format="json")
    assert response.status_code == 400 and "checkpoint_step" in response.json()
