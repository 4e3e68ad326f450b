"""The UI in a real browser (Debian's chromium driven by Playwright) against the real stack:
log in, compose a job through the form, see a validation error, fix it, see the estimate when
the panel shows one, submit, watch the job train on the emulator until its loss curve and a
checkpoint appear, and cancel another job. Screenshots go to test-artifacts/.

The browser is the system's chromium (installed by .ci/run); Playwright's own download is
never used. With CI=true a missing chromium fails the test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from config.devstack import Stack
from tests.stacks import Api

pytestmark = pytest.mark.integration

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TRAINING_TIMEOUT_MS = 300_000


@pytest.fixture
def page(browser: Any, stack: Stack) -> Iterator[Any]:
    context = browser.new_context(base_url=stack.web_url, viewport={"width": 1400,
                                                                      "height": 1000})
    page = context.new_page()
    # Cancelling asks for confirmation.
    page.on("dialog", lambda dialog: dialog.accept())
    try:
        yield page
    finally:
        context.close()


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"browser-{name}.png"), full_page=True)


def test_compose_watch_and_cancel_in_the_browser(page: Any, stack: Stack, api: Api,
                                                 seeded: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    # Log in.
    page.goto("/login/")
    page.fill("#id_username", seeded["username"])
    page.fill("#id_password", seeded["password"])
    page.click("button[type=submit]")
    expect(page.locator(".topbar .nav")).to_contain_text("Jobs")
    assert "/login/" not in page.url

    # Compose: a T4 count no N1 machine takes is refused, on the field, with the valid counts.
    page.goto("/jobs/new/")
    page.select_option("#id_team", seeded["team"])
    page.fill("#id_name", "browser-ddp")
    page.fill("#id_args", "--preset tiny --steps 400 --checkpoint-every 20")
    page.select_option("#id_chief_accelerator_type", "NVIDIA_TESLA_T4")
    page.fill("#id_chief_accelerator_count", "3")
    page.locator("#id_chief_accelerator_count").dispatch_event("change")
    panel = page.locator("#validation")
    expect(panel.locator(".result.bad")).to_be_visible(timeout=15_000)
    expect(panel).to_contain_text("takes 1, 2 or 4 NVIDIA_TESLA_T4, not 3")
    shot(page, "1-validation-error")

    # Fix it: no accelerator. The panel turns valid (and shows the estimate where it has one).
    page.select_option("#id_chief_accelerator_type", "none")
    page.fill("#id_chief_accelerator_count", "0")
    page.locator("#id_chief_accelerator_count").dispatch_event("change")
    expect(panel.locator(".result.good")).to_be_visible(timeout=15_000)
    estimate = panel.locator("[data-estimate]")
    if not estimate.count():
        estimate = panel.locator("h2, h3", has_text=re.compile("estimate", re.IGNORECASE))
    if estimate.count():
        expect(panel).to_contain_text("$")
    shot(page, "2-valid-with-estimate")

    # Submit: the job's page opens, and the job trains on the emulator.
    page.click("button.primary[type=submit]")
    page.wait_for_url("**/jobs/*/", timeout=15_000)
    job_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
    expect(page.locator(".badge.big")).to_be_visible()
    # The loss chart is the first of the four (axes x, y): it has a line of several steps.
    page.wait_for_function(
        """() => { const chart = document.getElementById('metrics-chart');
                   return chart && chart.data && chart.data.some(
                       t => t.yaxis === 'y' && t.x.length > 1); }""",
        timeout=TRAINING_TIMEOUT_MS)
    checkpoints = page.locator("#job-checkpoints tbody tr td.path")
    expect(checkpoints.first).to_contain_text("step-", timeout=TRAINING_TIMEOUT_MS)
    shot(page, "3-training-loss-and-checkpoint")
    assert api.get(f"/api/v1/jobs/{job_id}/")["name"] == "browser-ddp"

    # Cancel another job from its page.
    other = api.post("/api/v1/jobs/", {
        "name": "browser-to-cancel", "team": seeded["team"],
        "chief": {"machine_type": "n1-standard-4"},
        "args": ["--preset", "tiny", "--steps", "100000"]})
    assert other.status_code == 201, other.text
    other_id = other.json()["id"]
    page.goto(f"/jobs/{other_id}/")
    page.locator("form[action$='/cancel/'] button").click()
    expect(page.locator(".badge.big")).to_have_text("CANCELLED", timeout=60_000)
    shot(page, "4-cancelled")
    assert api.get(f"/api/v1/jobs/{other_id}/")["state"] == "CANCELLED"

    # The first job is done with: stop it so it does not hold the two cores.
    api.post(f"/api/v1/jobs/{job_id}/cancel/")
