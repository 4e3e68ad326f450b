"""A sweep's and its trials' links: Google's pages for the project, region and id of each
(a trial gets every link a job gets), every part encoded; against the emulator, the sweep's
own page."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from controlplane.runs.links import console_url
from controlplane.sweeps import links
from controlplane.sweeps.models import Sweep
from controlplane.teams.models import Team

pytestmark = pytest.mark.django_db

BOARD = "projects/proj-1/locations/europe-west4/tensorboards/55"
EXPERIMENT = "projects/proj-1/locations/europe-west4/metadataStores/default/contexts/lr-study"


@pytest.fixture
def sweep(team: Team, member: Any) -> Sweep:
    sweep = Sweep.objects.create(
        team=team, created_by=member, name="s", request={}, project="proj-1",
        tuning_job={"trialJobSpec": {"tensorboard": BOARD, "experiment": EXPERIMENT}},
        region="europe-west4", metric_id="val_loss", goal="MINIMIZE",
        vertex_name="projects/proj-1/locations/europe-west4/hyperparameterTuningJobs/777")
    sweep.trials.create(trial_id="3", number=3, state="SUCCEEDED",
                        custom_job="projects/proj-1/locations/europe-west4/customJobs/9001")
    return sweep


def test_google_links_name_the_project_region_and_id(sweep: Sweep, settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = ""
    (console,) = links.for_sweep(sweep)
    parts = urlsplit(console.url)
    assert (parts.scheme, parts.netloc) == ("https", "console.cloud.google.com")
    assert parts.path == "/agent-platform/locations/europe-west4/training/777"
    assert parse_qs(parts.query) == {"project": ["proj-1"]}


def _query(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def test_a_trial_gets_every_link_a_job_gets(sweep: Sweep, settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = ""
    found = {link.key: link.url for link in links.for_trial(sweep, sweep.trials.get())}
    assert set(found) == {"console", "logs", "errors", "gpu_utilisation", "gpu_memory",
                          "tensorboard", "experiment"}
    assert found["console"] == console_url("proj-1", "europe-west4", "9001")
    assert urlsplit(found["console"]).path == "/agent-platform/locations/europe-west4/training/9001"
    logs = _query(found["logs"])
    assert logs["project"] == ["proj-1"]
    assert 'resource.labels.job_id="9001"' in logs["query"][0]
    assert found["errors"] == "https://console.cloud.google.com/errors?project=proj-1"
    for key in ("gpu_utilisation", "gpu_memory"):
        query = _query(found[key])
        assert query["project"] == ["proj-1"]
        series = json.loads(query["pageState"][0])["xyChart"]["dataSets"][0]
        assert 'resource.label."job_id"="9001"' in series["timeSeriesFilter"]["filter"]
    # The trial's TensorBoard experiment is its own CustomJob's, as for any job.
    assert found["tensorboard"] == (
        "https://europe-west4.tensorboard.googleusercontent.com/experiment/"
        "projects+proj-1+locations+europe-west4+tensorboards+55+experiments+9001")
    assert found["experiment"] == ("https://console.cloud.google.com/vertex-ai/experiments/"
                                   "locations/europe-west4/experiments/lr-study?project=proj-1")


def test_a_trial_without_tracking_has_no_tensorboard_or_experiment_link(
        sweep: Sweep, settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = ""
    sweep.tuning_job = {"trialJobSpec": {"tensorboard": "not/a/name", "experiment": 7}}
    keys = {link.key for link in links.for_trial(sweep, sweep.trials.get())}
    assert keys == {"console", "logs", "errors", "gpu_utilisation", "gpu_memory"}


def test_a_trial_with_a_hostile_name_gets_no_links(sweep: Sweep, settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = ""
    trial = sweep.trials.get()
    trial.custom_job = "projects/p/locations/r/customJobs/1/../../x"
    assert links.for_trial(sweep, trial) == []
    trial.custom_job = ""
    assert links.for_trial(sweep, trial) == []


def test_no_links_before_vertex_names_it(sweep: Sweep, settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = ""
    sweep.vertex_name = ""
    assert links.for_sweep(sweep) == []


def test_the_emulator_links_to_the_sweeps_own_page(sweep: Sweep, settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = "127.0.0.1:1"
    assert [link.url for link in links.for_sweep(sweep)] == [f"/sweeps/{sweep.pk}/"]
    assert [link.url for link in links.for_trial(sweep, sweep.trials.get())] == \
        [f"/sweeps/{sweep.pk}/#trial-3"]


def test_the_api_gives_each_trial_its_links(sweep: Sweep, settings: Any, member: Any) -> None:
    from django.test import Client
    from django.urls import reverse

    settings.VERTEX_EMULATOR_ADDR = ""
    client = Client()
    client.force_login(member)
    (trial,) = client.get(reverse("api-sweep-detail", args=[sweep.pk])).json()["trials"]
    assert trial["links"]["console"] == console_url("proj-1", "europe-west4", "9001")
    assert "gpu_memory" in trial["links"] and "experiment" in trial["links"]
