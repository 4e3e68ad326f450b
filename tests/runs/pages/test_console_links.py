"""Links from a job to Google's pages (VERTEX_FACTS.md A9), and to the product's own pages
against the emulator: well-formed for the job's project, region and id, with every hostile
component kept inside its own part of the URL."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.runs import links
from controlplane.runs.models import Job, JobAttempt
from controlplane.teams.models import Team
from tests.runs.pages.conftest import CPU_CUSTOM_JOB
from vertexplan.logparse.filters import job_filter

HOSTILE = 'p"&query=x#frag/../<script>?a=b c'


def _by_key(found: list[links.Link]) -> dict[str, str]:
    return {link.key: link.url for link in found}


def _only(url: str, name: str) -> str:
    values = parse_qs(urlsplit(url).query, keep_blank_values=True)
    assert len(values[name]) == 1, values
    return values[name][0]


def test_console_link_has_the_vertex_format() -> None:
    url = links.console_url("my-proj", "europe-west4", "1234567890")
    assert url == ("https://console.cloud.google.com/agent-platform/locations/europe-west4/"
                   "training/1234567890?project=my-proj")


def test_logs_link_carries_the_followers_filter_for_the_job() -> None:
    url = _by_key(links.google_job_links("my-proj", "us-central1", "42"))["logs"]
    parts = urlsplit(url)
    assert (parts.scheme, parts.netloc, parts.path) == (
        "https", "console.cloud.google.com", "/logs/query")
    assert _only(url, "project") == "my-proj"
    assert _only(url, "query") == job_filter("42")
    assert 'resource.type="ml_job"' in job_filter("42")
    assert 'resource.labels.job_id="42"' in job_filter("42")


def test_errors_and_gpu_metrics_name_the_project_and_the_job() -> None:
    found = _by_key(links.google_job_links("my-proj", "us-central1", "42"))
    assert found["errors"] == "https://console.cloud.google.com/errors?project=my-proj"
    for key, metric in (("gpu_utilisation", "accelerator/utilization"),
                        ("gpu_memory", "accelerator/memory/utilization")):
        url = found[key]
        assert url.startswith("https://console.cloud.google.com/monitoring/metrics-explorer?")
        assert _only(url, "project") == "my-proj"
        state = json.loads(_only(url, "pageState"))
        series = state["xyChart"]["dataSets"][0]["timeSeriesFilter"]["filter"]
        assert f'metric.type="ml.googleapis.com/training/{metric}"' in series
        assert 'resource.type="cloudml_job"' in series
        assert 'resource.label."job_id"="42"' in series
    assert "tensorboard" not in found


def test_tensorboard_link_follows_the_sdk_format() -> None:
    board = "projects/my-proj/locations/us-central1/tensorboards/777"
    url = _by_key(links.google_job_links("my-proj", "us-central1", "42", board))["tensorboard"]
    assert url == ("https://us-central1.tensorboard.googleusercontent.com/experiment/"
                   "projects+my-proj+locations+us-central1+tensorboards+777+experiments+42")


@pytest.mark.parametrize("board", ["", "tensorboards/1", "projects/p/locations/x.evil.com/"
                                   "tensorboards/1", "projects/p/locations/us/tensorboards/1/x"])
def test_no_tensorboard_link_without_a_full_resource_name(board: str) -> None:
    assert links.tensorboard_url(board, "42") is None


def test_hostile_components_stay_inside_their_parameter() -> None:
    found = _by_key(links.google_job_links(HOSTILE, HOSTILE, HOSTILE))
    for key, url in found.items():
        parts = urlsplit(url)
        assert parts.scheme == "https" and parts.netloc == "console.cloud.google.com", key
        assert parts.fragment == "", key
        assert set(parse_qs(parts.query)) <= {"project", "query", "pageState"}, key
        assert _only(url, "project") == HOSTILE, key
        assert " " not in url and '"' not in url and "<" not in url, key
    console = urlsplit(found["console"])
    # Region and id are one path segment each, whatever they hold.
    segments = console.path.split("/")
    assert segments[:3] == ["", "agent-platform", "locations"]
    assert len(segments) == 6 and segments[4] == "training"
    assert _only(found["logs"], "query") == job_filter(HOSTILE)


def test_hostile_tensorboard_project_cannot_leave_the_host() -> None:
    board = "projects/a@b#c?d/locations/us-central1/tensorboards/1"
    url = links.tensorboard_url(board, 'x"&y')
    assert url is not None
    parts = urlsplit(url)
    assert parts.netloc == "us-central1.tensorboard.googleusercontent.com"
    assert parts.query == "" and parts.fragment == ""


@pytest.fixture
def submitted(team: Team, member: Any, make_job: Callable[..., Job]) -> Job:
    board = "projects/p/locations/us-central1/tensorboards/9"
    job = make_job(team, member, name="gpt")
    job.custom_job = {**CPU_CUSTOM_JOB,
                      "jobSpec": {**CPU_CUSTOM_JOB["jobSpec"], "tensorboard": board}}
    job.save(update_fields=["custom_job"])
    JobAttempt.objects.create(job=job, number=1, display_name=f"cp-{job.pk}-a1",
                              vertex_name="projects/p/locations/europe-west4/customJobs/5150",
                              vertex_job_id="5150", region="europe-west4")
    return job


def test_job_page_and_api_link_to_google_for_the_current_attempt(
        member_client: Client, submitted: Job, settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = ""
    html = member_client.get(reverse("job-detail", args=[submitted.pk])).content.decode()
    assert "Open in Google Cloud" in html
    console = links.console_url("p", "europe-west4", "5150")
    assert f'href="{console.replace("&", "&amp;")}"' in html
    assert 'data-link="tensorboard"' in html and 'data-link="gpu_memory"' in html

    api = member_client.get(reverse("api-job-detail", args=[submitted.pk])).json()
    assert api["links"]["console"] == console
    assert set(api["links"]) == {"console", "logs", "errors", "gpu_utilisation", "gpu_memory",
                                 "tensorboard"}
    assert _only(api["links"]["logs"], "query") == job_filter("5150")


def test_unsubmitted_job_has_no_google_links(member_client: Client, team: Team, member: Any,
                                             make_job: Callable[..., Job],
                                             settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = ""
    job = make_job(team, member, name="waiting")
    assert member_client.get(reverse("api-job-detail", args=[job.pk])).json()["links"] == {}
    assert "Open in Google Cloud" not in member_client.get(
        reverse("job-detail", args=[job.pk])).content.decode()


def test_against_the_emulator_links_point_at_the_products_pages(
        member_client: Client, submitted: Job, settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = "127.0.0.1:1"
    page = reverse("job-detail", args=[submitted.pk])
    api = member_client.get(reverse("api-job-detail", args=[submitted.pk])).json()["links"]
    assert api["console"] == f"http://testserver{page}"
    assert api["logs"] == f"http://testserver{page}#job-logs"
    assert all("google" not in url for url in api.values())
    html = member_client.get(page).content.decode()
    assert "Local stack:" in html and "console.cloud.google.com" not in html


EXPERIMENT = "projects/my-proj/locations/us-central1/metadataStores/default/contexts/lr-study"
RUN = "projects/my-proj/locations/us-central1/metadataStores/default/contexts/lr-study-run-2"


def test_experiment_links_follow_the_sdk_formats() -> None:
    found = _by_key(links.spec_links("my-proj", "us-central1", "42",
                                     {"experiment": EXPERIMENT, "experimentRun": RUN}))
    assert found["experiment"] == ("https://console.cloud.google.com/vertex-ai/experiments/"
                                   "locations/us-central1/experiments/lr-study?project=my-proj")
    assert found["experiment_run"] == (
        "https://console.cloud.google.com/vertex-ai/experiments/locations/us-central1/"
        "experiments/lr-study/runs/lr-study-run-2?project=my-proj")
    assert found["console"] == links.console_url("my-proj", "us-central1", "42")


@pytest.mark.parametrize("spec", [{}, {"experiment": "lr-study"}, {"experiment": 3},
                                  {"experimentRun": RUN}, None, "x"])
def test_no_experiment_link_without_a_full_context_name(spec: Any) -> None:
    assert "experiment" not in _by_key(links.spec_links("p", "us-central1", "42", spec))


def test_a_hostile_experiment_name_stays_in_its_path_segment() -> None:
    name = 'projects/a"b&c=d/locations/x%2F#y/metadataStores/default/contexts/e?f=g'
    url = links.experiment_url(name)
    assert url is not None
    parts = urlsplit(url)
    assert parts.netloc == "console.cloud.google.com" and parts.fragment == ""
    assert _only(url, "project") == 'a"b&c=d'
    assert parts.path.split("/")[-1] == "e%3Ff%3Dg"
