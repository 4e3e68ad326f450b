"""The job page's serving panel (each endpoint serving one of the job's models, its traffic share,
percentiles and SLO) and the endpoint page's deployments side by side: what they show, the team
wall, and a query count that does not grow with the number of endpoints."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.runs.models import Job
from controlplane.serving import latency_table
from controlplane.serving.models import Deployment, Endpoint, LatencySample, ModelEntry, Slo
from controlplane.teams.models import Role
from tests.people import make_user


def _entry(job: Job, user: Any, step: int) -> ModelEntry:
    return ModelEntry.objects.create(
        team=job.team, job=job, created_by=user, display_name=f"gpt-step-{step}", step=step,
        artifact_uri=f"gs://b/job/step-{step}", image_uri="img", state=ModelEntry.State.READY)


def _endpoint(team: Any, user: Any, name: str) -> Endpoint:
    return Endpoint.objects.create(team=team, created_by=user, name=name,
                                   state=Endpoint.State.READY)


def _deploy(endpoint: Endpoint, entry: ModelEntry, user: Any, traffic: int,
            latencies: list[float]) -> Deployment:
    deployment = Deployment.objects.create(
        endpoint=endpoint, model_entry=entry, created_by=user, machine_type="n1-standard-4",
        traffic_percent=traffic, state=Deployment.State.DEPLOYED)
    now = timezone.now()
    LatencySample.objects.bulk_create([
        LatencySample(endpoint=endpoint, at=now - timedelta(seconds=i + 1), latency_ms=ms,
                      ok=True, deployed_model_id=deployment.deployed_model_id)
        for i, ms in enumerate(latencies)])
    return deployment


@pytest.fixture
def served(trained_job: Job, member: Any, other_team: Any) -> dict[str, Any]:
    """Two endpoints of the job's team serve its models (one as a 30% canary beside another
    job's model); one endpoint of another team is given the same model and must not show."""
    step30, step60 = _entry(trained_job, member, 30), _entry(trained_job, member, 60)
    prod, canary = _endpoint(trained_job.team, member, "prod"), _endpoint(
        trained_job.team, member, "canary")
    _deploy(prod, step60, member, 100, [10.0, 20.0, 30.0, 40.0, 50.0])
    other_job = Job.objects.create(team=trained_job.team, created_by=member, name="other",
                                   request={}, custom_job={}, project="p", region="r")
    _deploy(canary, _entry(other_job, member, 5), member, 70, [500.0] * 4)
    _deploy(canary, step30, member, 30, [100.0])
    Slo.objects.create(endpoint=canary, p95_ms=200, status=Slo.Status.BREACHED)
    foreign = _endpoint(other_team, make_user("oscar", other_team, Role.ADMIN), "foreign")
    _deploy(foreign, step60, member, 100, [1.0])
    return {"prod": prod, "canary": canary, "foreign": foreign}


def test_each_endpoint_serving_the_job_shows_its_share_percentiles_and_slo(
        trained_job: Job, served: dict[str, Any]) -> None:
    rows = {row.endpoint.name: row for row in latency_table.for_job(trained_job)}
    assert set(rows) == {"prod", "canary"}  # another team's endpoint never shows
    prod, canary = rows["prod"], rows["canary"]
    assert prod.traffic_percent == 100 and prod.slo_status is None
    assert (prod.summary.samples, prod.summary.p50_ms, prod.summary.p95_ms) == (5, 30.0, 48.0)
    assert canary.traffic_percent == 30 and canary.slo_status == "BREACHED"
    assert canary.models == ["gpt-step-30 (step 30)"]
    # The endpoint's latency is over all its probes: what the job's canary shares with.
    assert canary.summary.samples == 5 and canary.summary.p50_ms == 500.0


def test_the_query_count_does_not_grow_with_the_endpoints(
        trained_job: Job, member: Any, served: dict[str, Any]) -> None:
    with CaptureQueriesContext(connection) as few:
        assert len(latency_table.for_job(trained_job)) == 2
    entry = ModelEntry.objects.get(job=trained_job, step=60)
    for i in range(5):
        _deploy(_endpoint(trained_job.team, member, f"more-{i}"), entry, member, 100, [5.0])
    with CaptureQueriesContext(connection) as many:
        assert len(latency_table.for_job(trained_job)) == 7
    assert len(few) == len(many) == 2  # the rows with endpoint, SLO and model; the probes


def test_the_job_page_shows_the_panel_with_links_to_the_endpoints(
        trained_job: Job, member: Any, served: dict[str, Any]) -> None:
    client = Client()
    client.force_login(member)
    page = client.get(reverse("job-detail", args=[trained_job.pk])).content.decode()
    assert 'id="job-serving"' in page and 'id="job-serving-latency"' in page
    assert reverse("serving-endpoint", args=[served["prod"].pk]) in page
    assert reverse("serving-endpoint", args=[served["foreign"].pk]) not in page
    assert "30.0 ms" in page and "BREACHED" in page
    assert page.count('class="chart latency-chart"') == 2  # one chart per endpoint
    # The table refreshes on its own through the job page's partials, the charts staying.
    part = client.get(reverse("job-partial", args=[trained_job.pk, "serving-latency"]))
    text = part.content.decode()
    assert part.status_code == 200 and text.startswith('<table class="grid compact" id="job-')
    assert "canary" in text and "latency-chart" not in text


def test_the_endpoint_page_compares_its_deployments_side_by_side(
        member: Any, served: dict[str, Any]) -> None:
    client = Client()
    client.force_login(member)
    page = client.get(reverse("serving-endpoint", args=[served["canary"].pk])).content.decode()
    split = page[page.index('id="traffic-split"'):page.index("Deployed models")]
    assert "70%" in split and "30%" in split
    assert "500.0 ms" in split and "100.0 ms" in split  # each one's own probes
    assert "step 30" in split and "step 5" in split


def test_the_api_reports_the_same_table(trained_job: Job, member: Any,
                                        served: dict[str, Any]) -> None:
    client = APIClient()
    client.force_authenticate(member)
    body = client.get(f"/api/v1/serving/jobs/{trained_job.pk}/").json()
    now = {row["name"]: row for row in body["serving_now"]}
    assert set(now) == {"prod", "canary"}
    assert now["prod"]["p50_ms"] == 30.0 and now["prod"]["traffic_percent"] == 100
    assert now["canary"]["slo_status"] == "BREACHED"
    # The latency charts' data keeps to the team too.
    assert {e["name"] for e in body["endpoints"]} == {"prod", "canary"}
