"""A sweep in its team's month: submitting one reserves every trial's estimate from the budget
(refused with the numbers when it cannot fit, nothing recorded), and what its trials cost
counts in the month's spend."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from controlplane.costs import budgets, spend
from controlplane.costs.models import TeamBudget
from controlplane.sweeps.models import Sweep, SweepState
from controlplane.teams.models import Team
from tests.sweeps.conftest import TRIAL_JOB, sweep_body

pytestmark = pytest.mark.django_db


def budget(team: Team, usd: float) -> None:
    TeamBudget.objects.update_or_create(team=team, defaults={
        "monthly_micros": int(usd * 1_000_000), "on_exceed": "notify"})


def submit(member: Any, **changes: Any) -> Any:
    client = APIClient()
    client.force_authenticate(member)
    return client.post("/api/v1/sweeps/", {**sweep_body(**changes), "team": "vision"},
                       format="json")


def test_a_sweep_reserves_every_trial_and_is_refused_past_the_budget(
        team: Team, member: Any, tuning_backend: Any) -> None:
    first = submit(member)
    assert first.status_code == 201, first.content
    estimate = first.json()["estimate_micros"]
    Sweep.objects.all().delete()
    # Room for two such sweeps, not three.
    budget(team, 2.5 * estimate / 1_000_000)
    assert submit(member).status_code == 201
    assert budgets.standing(team).committed == estimate
    assert submit(member).status_code == 201
    refused = submit(member)
    assert refused.status_code == 400
    answer = refused.json()
    assert "over budget: this sweep may cost up to" in answer["budget"][0]
    assert "3 trials x 0.5 h each" in answer["budget"][0]
    assert answer["estimate_micros"] == estimate
    assert answer["committed_micros"] == 2 * estimate
    assert Sweep.objects.count() == 2
    # Fewer trials fit.
    assert submit(member, max_trial_count=1, parallel_trial_count=1).status_code == 201


def test_an_unpriced_sweep_is_refused_only_where_a_budget_applies(
        team: Team, member: Any, tuning_backend: Any) -> None:
    unpriced = {**TRIAL_JOB, "region": "us-west2"}  # the price table has no us-west2 rows
    made = submit(member, trial_job=unpriced)
    assert made.status_code == 201 and made.json()["estimate_micros"] is None
    budget(team, 100)
    refused = submit(member, trial_job=unpriced)
    assert refused.status_code == 400
    assert "this sweep cannot be priced" in refused.json()["budget"][0]


def test_what_a_sweep_costs_counts_in_its_teams_month(team: Team, member: Any,
                                                      tuning_backend: Any) -> None:
    made = Sweep.objects.get(pk=submit(member).json()["id"])
    # Running: its estimate is reserved, nothing billed yet.
    assert spend.month_spent(team) == 0
    assert spend.month_committed(team) == made.estimate_micros
    Sweep.objects.filter(pk=made.pk).update(cost_micros=1_234, state=SweepState.SUCCEEDED)
    assert spend.month_spent(team) == 1_234
    assert spend.month_committed(team) == 1_234


def test_the_form_shows_the_budgets_refusal(team: Team, member: Any,
                                            tuning_backend: Any) -> None:
    from tests.compose.test_sweep_form import sweep_form

    budget(team, 0.01)
    client = Client()
    client.force_login(member)
    response = client.post("/sweeps/compose/", sweep_form())
    assert response.status_code == 400
    assert "over budget: this sweep may cost up to" in response.content.decode()
    assert not Sweep.objects.exists()
