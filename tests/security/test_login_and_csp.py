"""Login limits in the shared cache and on the admin's login too; password change and reset
with Django's own views; a strict Content-Security-Policy that the pages need no exception to."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core import mail
from django.core.cache import cache
from django.test import Client

from controlplane.core import csp
from controlplane.runs.models import Job
from tests.security.conftest import World


@pytest.fixture
def ann(world: World) -> Any:
    user = get_user_model().objects.get(username="ann")
    user.set_password("right-password")
    user.email = "ann@example.com"
    user.is_staff = True
    user.save()
    return user


def test_the_default_cache_is_shared_not_per_process(settings: Any) -> None:
    # Counted in one process's memory, a lockout would hold in one web worker of several.
    assert settings.CACHES["default"]["BACKEND"] != \
        "django.core.cache.backends.locmem.LocMemCache"
    assert "locmem" not in type(cache).__module__


def test_the_admin_login_is_behind_the_same_limits(ann: Any, settings: Any) -> None:
    settings.CP_LOGIN_MAX_FAILURES = 3
    client = Client()
    for door in ("/admin/login/", "/admin/login/", "/login/"):
        wrong = client.post(door, {"username": "ann", "password": "guess"})
        assert wrong.status_code == 200
    for door in ("/admin/login/", "/login/"):
        locked = client.post(door, {"username": "ann", "password": "right-password"})
        assert locked.status_code == 429, door
        assert "_auth_user_id" not in client.session
    cache.clear()
    assert client.post("/admin/login/?next=/admin/", {
        "username": "ann", "password": "right-password", "next": "/admin/"}).status_code == 302
    assert client.get("/admin/").status_code == 200


def test_a_user_changes_their_own_password(ann: Any) -> None:
    client = Client()
    client.force_login(ann)
    form = client.get("/password/change/")
    # The site's own page (its top bar, labelled fields), not the admin's.
    assert form.status_code == 200 and "Django administration" not in form.content.decode()
    assert 'class="topbar"' in form.content.decode()
    assert '<label for="id_old_password">' in form.content.decode()
    changed = client.post("/password/change/", {
        "old_password": "right-password", "new_password1": "a-new-long-passphrase",
        "new_password2": "a-new-long-passphrase"})
    assert changed.status_code == 302 and changed["Location"] == "/password/change/done/"
    assert "Password changed" in client.get("/password/change/done/").content.decode()
    ann.refresh_from_db()
    assert ann.check_password("a-new-long-passphrase")
    wrong_old = client.post("/password/change/", {
        "old_password": "nope", "new_password1": "x" * 12, "new_password2": "x" * 12})
    assert wrong_old.status_code == 200
    ann.refresh_from_db()
    assert ann.check_password("a-new-long-passphrase")


def test_a_user_resets_a_forgotten_password_by_mail(ann: Any, settings: Any) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    client = Client()
    assert client.get("/login/").content.count(b"/password/reset/") == 1
    sent = client.post("/password/reset/", {"email": "ann@example.com"})
    assert sent.status_code == 302
    assert len(mail.outbox) == 1
    link = re.search(r"https?://[^/]+(/password/reset/[^/]+/[^/\s]+/)", mail.outbox[0].body)
    assert link, mail.outbox[0].body
    form = client.get(link.group(1), follow=True)
    assert form.status_code == 200
    done = client.post(form.redirect_chain[-1][0], {"new_password1": "reset-passphrase-1",
                                                    "new_password2": "reset-passphrase-1"})
    assert done.status_code == 302
    ann.refresh_from_db()
    assert ann.check_password("reset-passphrase-1")
    # An unknown address looks the same and sends nothing.
    assert client.post("/password/reset/", {"email": "nobody@example.com"}).status_code == 302
    assert len(mail.outbox) == 1


def test_password_reset_requests_are_limited(ann: Any, settings: Any) -> None:
    settings.CP_LOGIN_MAX_FAILURES = 2
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    client = Client()
    codes = [client.post("/password/reset/", {"email": "ann@example.com"}).status_code
             for _ in range(3)]
    assert codes == [302, 302, 429]
    assert len(mail.outbox) == 2


# Data for a page's script (type="application/json", json_script) is not code: allowed.
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\b(src=|type=\"application/json\"))[^>]*>", re.I)
INLINE_STYLE = re.compile(r"<style\b|\sstyle\s*=", re.I)
HANDLER = re.compile(r"\son[a-z]+\s*=", re.I)


def test_every_page_sends_the_policy_and_needs_no_inline_code(
        world: World, ann: Any, make_job: Callable[..., Job]) -> None:
    job = make_job(world.team, world.users["admin"], name="exp")
    client = Client()
    client.force_login(world.users["admin"])
    pages = ["/", f"/jobs/{job.pk}/", "/jobs/new/", "/serving/", "/tokens/", "/teams/",
             "/teams/vision/members/", "/teams/vision/costs/", "/teams/vision/audit/",
             "/teams/vision/notifications/", f"/serving/jobs/{job.pk}/panel/",
             "/password/change/", "/api/docs/"]
    for page in pages:
        answer = client.get(page)
        assert answer.status_code == 200, page
        assert answer[csp.HEADER] == csp.POLICY, page
        html = answer.content.decode()
        for pattern in (INLINE_SCRIPT, INLINE_STYLE, HANDLER):
            found = pattern.search(html)
            assert not found, f"{page}: {html[max(found.start() - 80, 0):found.end() + 80]}"
    directives = dict(d.split(" ", 1) for d in csp.POLICY.split("; "))
    assert "'unsafe-eval'" not in csp.POLICY
    assert "'unsafe-inline'" not in csp.POLICY
    # Beyond the site's files, only Plotly's two fixed <style> texts, by hash.
    assert directives["script-src"] == "'self'"
    assert directives["style-src"].split() == ["'self'", *(
        f"'sha256-{h}'" for h in csp.PLOTLY_STYLE_HASHES)]
    assert Client().get("/login/")[csp.HEADER] == csp.POLICY
    assert client.get("/api/v1/jobs/")[csp.HEADER] == csp.POLICY
