"""A sweep's and its trials' links: Google's pages for the project, region and id of each,
every part encoded; against the emulator, the sweep's own page."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from controlplane.sweeps import links
from controlplane.sweeps.models import Sweep
from controlplane.teams.models import Team

pytestmark = pytest.mark.django_db


@pytest.fixture
def sweep(team: Team, member: Any) -> Sweep:
    sweep = Sweep.objects.create(
        team=team, created_by=member, name="s", request={}, tuning_job={}, project="proj-1",
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
    trial_console, logs = links.for_trial(sweep, sweep.trials.get())
    assert urlsplit(trial_console.url).path.endswith("/locations/europe-west4/training/9001")
    query = parse_qs(urlsplit(logs.url).query)
    assert query["project"] == ["proj-1"] and '"9001"' in query["query"][0]


def test_no_links_before_vertex_names_it(sweep: Sweep, settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = ""
    sweep.vertex_name = ""
    assert links.for_sweep(sweep) == []


def test_the_emulator_links_to_the_sweeps_own_page(sweep: Sweep, settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = "127.0.0.1:1"
    assert [link.url for link in links.for_sweep(sweep)] == [f"/sweeps/{sweep.pk}/"]
    assert [link.url for link in links.for_trial(sweep, sweep.trials.get())] == \
        [f"/sweeps/{sweep.pk}/#trial-3"]
