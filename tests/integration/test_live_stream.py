"""A trainer's lines, steps and the job's state changes reach the job page's event stream on
the real stack: the trainer on the emulator, the follower in the Celery worker storing them,
Redis pub/sub, and the web server (gunicorn's ASGI worker) serving the stream."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
import requests

from config.devstack import Stack
from tests.integration.test_end_to_end import TERMINAL, browser_session, ddp_job
from tests.stacks import Api

pytestmark = pytest.mark.integration


def read_events(response: requests.Response, into: list[tuple[str, dict[str, Any], float]]
                ) -> None:
    """Server-sent events as they arrive: (event, data, time received)."""
    kind = ""
    for raw in response.iter_lines(chunk_size=1, decode_unicode=True):
        if raw.startswith("event: "):
            kind = raw[len("event: "):]
        elif raw.startswith("data: ") and kind:
            into.append((kind, json.loads(raw[len("data: "):]), time.time()))
            kind = ""


def test_a_trainers_lines_arrive_on_the_job_pages_stream(
        stack: Stack, api: Api, seeded: dict[str, Any]) -> None:
    session = browser_session(stack, seeded["username"], seeded["password"])
    response = api.post("/api/v1/jobs/", ddp_job("live-stream", steps=60, checkpoint_every=30))
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]

    url = f"{stack.web_url}/jobs/{job_id}/events/"
    stream = session.get(url, stream=True, timeout=(10, 120))
    assert stream.status_code == 200
    assert stream.headers["Content-Type"] == "text/event-stream"
    events: list[tuple[str, dict[str, Any], float]] = []
    reader = threading.Thread(target=read_events, args=(stream, events), daemon=True)
    reader.start()

    job = api.wait_for(job_id, lambda j: j["state"] in TERMINAL, timeout_s=300,
                       what="the job to end", stack=stack)
    assert job["state"] == "SUCCEEDED", job["error_message"]
    # The stream ends by itself once the job has ended (its last event says so).
    reader.join(timeout=60)
    assert not reader.is_alive(), f"the stream did not end: {[e[0] for e in events][-5:]}"
    stream.close()

    kinds = [kind for kind, _, _ in events]
    assert kinds[0] == "ready"
    states = [data["state"] for kind, data, _ in events if kind == "state"]
    assert "RUNNING" in states and states[-1] == "SUCCEEDED"
    steps = [data["step"] for kind, data, _ in events if kind == "steps"]
    assert steps and max(steps) == 60, "steps arrive as they are stored"

    pushed = [line for kind, data, _ in events if kind == "lines" for line in data["lines"]]
    assert any(line["replica"] == "workerpool0-0" for line in pushed), "rank 0's output"
    # Every pushed line is a stored line of this job, and none is pushed twice.
    stored = {line["insert_id"] for line in
              api.get(f"/api/v1/jobs/{job_id}/logs/", limit=1000)["results"]}
    ids = [line["id"] for line in pushed]
    assert ids and set(ids) <= stored
    assert len(ids) == len(set(ids)), "a line re-read by the follower is not pushed again"


def test_the_stream_asks_for_a_login_as_the_page_does(stack: Stack, api: Api) -> None:
    url = f"{stack.web_url}/jobs/1/events/"
    anonymous = requests.get(url, allow_redirects=False, timeout=10)
    assert anonymous.status_code == 302 and "/login/" in anonymous.headers["Location"]
    bad = requests.get(url, headers={"Authorization": "Token not-a-token"}, timeout=10)
    assert bad.status_code == 401
    missing = api.session.get(f"{stack.web_url}/jobs/99999999/events/", timeout=10)
    assert missing.status_code == 404
