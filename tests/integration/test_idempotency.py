"""A client that retries after a timeout pays once: ten identical POSTs sent at the same moment
with one Idempotency-Key, to gunicorn (two processes, four threads each) on PostgreSQL,
create exactly one job, and every one of them answers with it."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests

from config.devstack import Stack
from tests.stacks import Api

pytestmark = pytest.mark.integration

CONCURRENT = 10


def test_ten_concurrent_identical_posts_create_one_job(stack: Stack, api: Api) -> None:
    name = f"idem-{uuid.uuid4().hex[:8]}"
    body = {"name": name, "strategy": "ddp",
            "args": ["--preset", "tiny", "--steps", "5"],
            "chief": {"machine_type": "n1-standard-4"}, "workers": None}
    key = str(uuid.uuid4())
    start = threading.Barrier(CONCURRENT)

    def send(_: int) -> requests.Response:
        start.wait()
        return api.session.post(f"{stack.web_url}/api/v1/jobs/", json=body,
                                headers={"Idempotency-Key": key}, timeout=60)

    with ThreadPoolExecutor(CONCURRENT) as pool:
        answers = list(pool.map(send, range(CONCURRENT)))

    assert [a.status_code for a in answers] == [201] * CONCURRENT, [a.text for a in answers]
    ids = {a.json()["id"] for a in answers}
    assert len(ids) == 1, ids
    replayed = [a for a in answers if a.headers.get("Idempotent-Replayed") == "true"]
    assert len(replayed) == CONCURRENT - 1
    jobs = api.get("/api/v1/jobs/", limit=1000)["results"]
    assert [j["id"] for j in jobs if j["name"] == name] == list(ids)

    # The same key with another body is refused, and creates nothing.
    other = api.session.post(f"{stack.web_url}/api/v1/jobs/", json={**body, "name": "x"},
                             headers={"Idempotency-Key": key}, timeout=60)
    assert other.status_code == 409
    assert "Idempotency-Key" in other.json()
