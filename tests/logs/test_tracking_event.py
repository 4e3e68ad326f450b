"""A trainer's `tracking` event becomes the job's tracking link (http(s) only), shown on the
job page and in its API record; a hostile URL never becomes a link."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.logs.store import Target, store_entries
from controlplane.runs.models import Job
from tests.logs.conftest import followed_job
from vertexplan.logparse.entries import LogEntry
from vertexplan.logparse.events import tracking_link

_ids = itertools.count(1)
T0 = datetime(2026, 5, 1, tzinfo=UTC)
RUN_URL = "https://wandb.ai/acme/tiny-gpt/runs/abc123"


@pytest.fixture
def job(db: None) -> Job:
    return followed_job()


@pytest.fixture
def member(job: Job) -> Any:
    return job.created_by


def emit(job: Job, payload: dict[str, Any], task: str = "workerpool0-0") -> None:
    n = next(_ids)
    entry = LogEntry(insert_id=f"t{n}", timestamp=T0 + timedelta(seconds=n), severity=200,
                     job_id="42", task_name=task, json_payload=payload,
                     log_name=f"projects/p/logs/{task}")
    store_entries([entry], {"42": Target(job.pk, 1)})


def tracking(url: Any, provider: Any = "wandb") -> dict[str, Any]:
    return {"severity": "INFO", "message": "tracked", "event": "tracking",
            "provider": provider, "run_url": url, "run_id": "abc123"}


def test_the_run_url_is_stored_and_linked_on_the_page_and_in_the_api(
        job: Job, member: Any, client: Client) -> None:
    emit(job, tracking(RUN_URL))
    job.refresh_from_db()
    assert job.tracking == {"wandb": RUN_URL}
    client.force_login(member)
    html = client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert f'href="{RUN_URL}"' in html and 'data-tracking="wandb"' in html
    assert "W&amp;B run" in html
    api = client.get(reverse("api-job-detail", args=[job.pk])).json()
    assert api["tracking"] == {"wandb": RUN_URL}


def test_a_later_run_replaces_the_link_of_its_provider(job: Job) -> None:
    emit(job, tracking(RUN_URL))
    emit(job, tracking("https://wandb.ai/acme/tiny-gpt/runs/def456"))
    emit(job, tracking("http://tb.example.com/x", provider="tensorboard"))
    job.refresh_from_db()
    assert job.tracking == {"wandb": "https://wandb.ai/acme/tiny-gpt/runs/def456",
                            "tensorboard": "http://tb.example.com/x"}


HOSTILE = ["javascript:alert(document.cookie)", "JavaScript:alert(1)",
           "data:text/html,<script>alert(1)</script>", "//evil.example.com/x", "/jobs/1/",
           "https://", "https://user:pass@evil.example.com/", "https://a.com/\nSet-Cookie: x",
           "https://a.com/ x", "\u202ehttps://a.com", "https://a.com:99999999/",
           "https://a.com/" + "x" * 3000, 5, None, ["https://a.com"]]


@pytest.mark.parametrize("url", HOSTILE)
def test_a_hostile_url_never_becomes_a_link(job: Job, member: Any, client: Client,
                                            url: Any) -> None:
    assert tracking_link({"provider": "wandb", "run_url": url}) is None
    emit(job, tracking(url))
    job.refresh_from_db()
    assert job.tracking == {}
    client.force_login(member)
    html = client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "data-tracking" not in html and "javascript:" not in html.lower()


def test_an_unknown_provider_is_not_linked(job: Job) -> None:
    emit(job, tracking(RUN_URL, provider="evil"))
    job.refresh_from_db()
    assert job.tracking == {}


def test_a_stored_hostile_url_is_still_not_shown(job: Job, member: Any,
                                                 client: Client) -> None:
    Job.objects.filter(pk=job.pk).update(tracking={"wandb": "javascript:alert(1)"})
    client.force_login(member)
    html = client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "javascript:" not in html
    assert client.get(reverse("api-job-detail", args=[job.pk])).json()["tracking"] == {}


def test_an_event_from_no_replica_of_the_job_is_refused(job: Job) -> None:
    emit(job, tracking(RUN_URL), task="workerpool3-0")
    job.refresh_from_db()
    assert job.tracking == {}
