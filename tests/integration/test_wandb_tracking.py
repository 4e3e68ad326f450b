"""A team's W&B settings reach a real trainer on the local stack: the trainer logs offline,
prints its run's URL, and the job's page and API link it; the key, once set, is never read
back."""

from __future__ import annotations

from typing import Any

import pytest

from config.devstack import Stack
from tests.integration.test_end_to_end import TERMINAL, browser_session
from tests.stacks import Api

pytestmark = pytest.mark.integration

KEY = "feedfacefeedfacefeedfacefeedfacefeedface"


def test_a_tracked_job_links_its_wandb_run(stack: Stack, api: Api,
                                           seeded: dict[str, Any]) -> None:
    team = seeded["team"]
    settings_url = f"{api.base}/api/v1/teams/{team}/tracking/"
    # Offline first: without a key the replica needs no network to log.
    answer = api.session.patch(settings_url, json={"wandb_entity": "acme",
                                                   "wandb_project": "tiny-gpt"}, timeout=30)
    assert answer.status_code == 200, answer.text
    response = api.post("/api/v1/jobs/", {
        "name": "tracked", "args": ["--preset", "tiny", "--steps", "6", "--batch-size", "4"],
        "chief": {"machine_type": "n1-standard-4"}})
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=300,
                       what="the tracked job to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]
    job = api.wait_for(job_id, lambda j: "wandb" in j["tracking"], timeout_s=60,
                       what="the tracking event to be stored", stack=stack)
    url = job["tracking"]["wandb"]
    assert url.startswith("https://wandb.ai/acme/tiny-gpt/runs/")
    events = api.get(f"/api/v1/jobs/{job_id}/logs/", limit=200, q="tracked in wandb")
    assert events["count"] >= 1

    session = browser_session(stack, seeded["username"], seeded["password"])
    page = session.get(f"{stack.web_url}/jobs/{job_id}/", timeout=10).text
    assert f'href="{url}"' in page and 'data-tracking="wandb"' in page
    # The local stack's jobs link to the product's own pages, not Google's.
    assert f'href="/jobs/{job_id}/#job-logs"' in page and "console.cloud.google.com" not in page
    assert api.get(f"/api/v1/jobs/{job_id}/")["links"]["logs"].endswith(
        f"/jobs/{job_id}/#job-logs")

    # A key, once set, is never read back (that jobs get it and nothing else shows it:
    # tests/teams/test_tracking_settings.py, where Vertex is a fake with no network to reach).
    answer = api.session.patch(settings_url, json={"wandb_api_key": KEY}, timeout=30)
    assert answer.status_code == 200 and answer.json()["wandb_api_key_set"] is True
    for path in (f"/api/v1/teams/{team}/tracking/", f"/api/v1/teams/{team}/audit/",
                 f"/teams/{team}/tracking/"):
        assert KEY not in session.get(stack.web_url + path, timeout=30).text, path
