"""Each trial's intermediate measurements, as Vertex reports them while the trial runs: kept
when the sweep is reconciled, in the API, and on the sweep page as the objective's line by step
and a step -> metrics list; malformed ones are left out, hostile names are escaped."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from controlplane.backends.base import RemoteTrial
from controlplane.sweeps import curves, lifecycle
from controlplane.sweeps.models import Sweep
from controlplane.teams.models import Team
from tests.sweeps.conftest import sweep_body

pytestmark = pytest.mark.django_db

MEASURED = [{"step": 10, "metrics": {"val_loss": 3.0, "val_perplexity": 20.1}},
            {"step": 20, "metrics": {"val_loss": 2.0}},
            {"step": 30, "metrics": {"val_loss": 2.5}}]


@pytest.fixture
def sweep(team: Team, member: Any) -> Sweep:
    sweep = Sweep.objects.create(
        team=team, created_by=member, name="s", request={}, tuning_job={}, project="p",
        region="us-central1", metric_id="val_loss", goal="MINIMIZE")
    sweep.trials.create(trial_id="1", number=1, state="ACTIVE", measurements=MEASURED)
    sweep.trials.create(trial_id="2", number=2, state="REQUESTED")
    return sweep


def test_the_objectives_line_spans_the_box_lowest_value_lowest() -> None:
    drawn = curves.curve(MEASURED, "val_loss")
    xy = [tuple(map(float, p.split(","))) for p in drawn.points.split()]
    assert [x for x, _ in xy] == [2.0, 60.0, 118.0]
    # 3.0 is the highest value: drawn at the top; 2.0 the lowest: at the bottom.
    assert [y for _, y in xy] == [2.0, 26.0, 14.0]
    assert (drawn.first, drawn.last) == (3.0, 2.5)
    assert drawn.listed[0] == (10, [("val_loss", 3.0), ("val_perplexity", 20.1)])


def test_one_measurement_is_a_flat_line_and_none_is_nothing() -> None:
    assert curves.curve(MEASURED[:1], "val_loss").points == "2.0,14.0 118.0,14.0"
    empty = curves.curve([], "val_loss")
    assert (empty.points, empty.listed, empty.first) == ("", [], None)


@pytest.mark.parametrize("bad", [
    "x", [1], [{"step": -1, "metrics": {"val_loss": 1.0}}], [{"step": True, "metrics": {}}],
    [{"step": 1, "metrics": {"val_loss": float("nan")}}], [{"step": 1, "metrics": "1.0"}],
    [{"step": 1, "metrics": {"val_loss": "1.0"}}]])
def test_malformed_measurements_are_left_out(bad: Any) -> None:
    drawn = curves.curve(bad, "val_loss")
    assert drawn.points == "" and drawn.listed == []


def test_other_metrics_are_listed_but_not_drawn() -> None:
    drawn = curves.curve([{"step": 5, "metrics": {"accuracy": 0.5}}], "val_loss")
    assert drawn.points == "" and drawn.listed == [(5, [("accuracy", 0.5)])]


def test_the_sweep_page_shows_each_trials_measurements(sweep: Sweep, member: Any) -> None:
    client = Client()
    client.force_login(member)
    page = client.get(f"/sweeps/{sweep.pk}/").content.decode()
    row = page.split('id="trial-1"')[1].split("</tr>")[0]
    assert '<polyline points="2.0,2.0 60.0,26.0 118.0,14.0"/>' in row
    assert "3 measurements" in row
    assert re.findall(r'data-step="(\d+)"', row) == ["10", "20", "30"]
    assert "<code>val_perplexity=20.10000</code>" in row
    waiting = page.split('id="trial-2"')[1].split("</tr>")[0]
    assert "<polyline" not in waiting and '<td class="measurements">—</td>' in waiting


def test_hostile_metric_names_are_escaped(sweep: Sweep, member: Any) -> None:
    sweep.trials.filter(trial_id="2").update(
        measurements=[{"step": 1, "metrics": {"<script>x</script>": 1.0}}])
    client = Client()
    client.force_login(member)
    page = client.get(f"/sweeps/{sweep.pk}/").content.decode()
    assert "<script>x</script>" not in page and "&lt;script&gt;x&lt;/script&gt;" in page


def test_the_api_gives_the_measurements_as_reported(sweep: Sweep, member: Any) -> None:
    client = Client()
    client.force_login(member)
    trials = client.get(f"/api/v1/sweeps/{sweep.pk}/").json()["trials"]
    assert trials[0]["measurements"] == MEASURED and trials[1]["measurements"] == []


def running(measurements: list[dict[str, Any]]) -> RemoteTrial:
    return RemoteTrial(id="1", state="ACTIVE", parameters={"lr": 1e-3}, final_metrics={},
                       final_step=None, measurements=measurements,
                       custom_job="projects/p/locations/us-central1/customJobs/100",
                       start_time=timezone.now(), end_time=None, infeasible_reason="")


def test_reconcile_keeps_a_running_trials_measurements_as_they_grow(
        team: Team, member: Any, tuning_backend: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    checked = lifecycle.check(sweep_body(), team)
    with django_capture_on_commit_callbacks(execute=False):
        made = lifecycle.record(team=team, user=member, request=sweep_body(), checked=checked)
    lifecycle.submit(made.pk)
    made.refresh_from_db()
    for count in (1, 3):
        tuning_backend.set_tuning(made.vertex_name, state="JOB_STATE_RUNNING",
                                  start_time=timezone.now(), trials=[running(MEASURED[:count])])
        lifecycle.reconcile(made.pk)
        trial = made.trials.get()
        assert trial.state == "ACTIVE" and trial.measurements == MEASURED[:count]
        assert trial.objective is None  # no final measurement before the trial ends
