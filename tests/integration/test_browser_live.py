"""The job page in a real browser (Debian's chromium) on the real stack: while the job runs, new
log lines arrive through the page's event stream and the timed polls stand down; with the
stream refused, the page polls and the lines still arrive."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from config.devstack import Stack
from tests.stacks import Api

pytestmark = pytest.mark.integration

LINES_TIMEOUT_MS = 180_000


@pytest.fixture
def signed_in(browser: Any, stack: Stack, seeded: dict[str, Any]) -> Iterator[Any]:
    context = browser.new_context(base_url=stack.web_url, viewport={"width": 1400,
                                                                      "height": 1000})
    page = context.new_page()
    page.goto("/login/")
    page.fill("#id_username", seeded["username"])
    page.fill("#id_password", seeded["password"])
    page.click("button[type=submit]")
    page.wait_for_url(lambda url: "/login/" not in url)
    try:
        yield page
    finally:
        context.close()


def long_job(api: Api, seeded: dict[str, Any], name: str) -> int:
    response = api.post("/api/v1/jobs/", {
        "name": name, "team": seeded["team"], "chief": {"machine_type": "n1-standard-4"},
        "args": ["--preset", "tiny", "--steps", "100000"]})
    assert response.status_code == 201, response.text
    return response.json()["id"]


def lines_in_panel(page: Any) -> int:
    return page.locator("#log-panel .log-line").count()


def test_lines_arrive_through_the_stream_and_the_polls_stand_down(
        signed_in: Any, api: Api, seeded: dict[str, Any]) -> None:
    page = signed_in
    job_id = long_job(api, seeded, "browser-live")
    try:
        polls: list[str] = []
        page.on("request", lambda r: polls.append(r.url) if "/partials/" in r.url else None)
        page.goto(f"/jobs/{job_id}/")
        # The trainer's lines appear (through the catch-up read or the stream).
        page.wait_for_function("() => document.querySelectorAll('#log-panel .log-line')"
                               ".length > 0", timeout=LINES_TIMEOUT_MS)
        polls.clear()
        before = lines_in_panel(page)
        # More lines arrive while no poll asks for them (htmx would ask every 3 s).
        page.wait_for_function(
            f"() => document.querySelectorAll('#log-panel .log-line').length > {before}",
            timeout=60_000)
        page.wait_for_timeout(7_000)
        after = lines_in_panel(page)
        assert after > before
        log_polls = [url for url in polls if "/partials/logs/" in url]
        assert len(log_polls) <= 1, f"the log panel was polled while streaming: {log_polls}"
        # Appended lines are the page's own markup, the job's text as text.
        last = page.locator("#log-panel .log-line").last
        assert last.get_attribute("data-id")
        assert last.locator(".msg").count() == 1 and last.locator(".replica").count() == 1
    finally:
        api.post(f"/api/v1/jobs/{job_id}/cancel/")


def test_with_the_stream_refused_the_page_polls(signed_in: Any, api: Api,
                                                seeded: dict[str, Any]) -> None:
    page = signed_in
    job_id = long_job(api, seeded, "browser-poll")
    try:
        page.route("**/events/", lambda route: route.abort())
        polls: list[str] = []
        page.on("request", lambda r: polls.append(r.url) if "/partials/logs/" in r.url
                else None)
        page.goto(f"/jobs/{job_id}/")
        page.wait_for_function("() => document.querySelectorAll('#log-panel .log-line')"
                               ".length > 0", timeout=LINES_TIMEOUT_MS)
        # Lines the job printed before the page loaded come with the page itself: the first
        # poll follows within the poll period (3 s), well inside this wait.
        deadline = time.monotonic() + 20
        while not polls and time.monotonic() < deadline:
            page.wait_for_timeout(250)
        assert polls, "the log panel is polled when the stream is refused"
    finally:
        api.post(f"/api/v1/jobs/{job_id}/cancel/")
