"""Team budgets: a submission whose estimate exceeds what is left of the month is refused with
the numbers; a running team that crosses its budget has its jobs cancelled or is only told,
as it chose, once per crossing; the budget API and who may change it."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from controlplane.costs import budgets, spend
from controlplane.costs.models import BudgetCrossing, TeamBudget
from controlplane.notifications.models import Notification
from controlplane.runs import lifecycle
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Membership, Role, Team
from tests.compose.test_compose_page import form_data
from tests.fakes import FakeBackend
from tests.notifications.slack_recorder import SlackRecorder
from tests.notifications.test_slack import HOOK_PATH, channel

# n1-standard-4 + 100 GB pd-ssd in us-central1, per hour, on demand
# (tests/vertexplan/pricing/test_actual.py).
N1_4_HOURLY = 218_499 + 26_780
# The survival fixture's job: a chief and one worker, both n1-standard-4.
TWO_N1_4_HOURLY = 2 * N1_4_HOURLY


def budget(team: Team, usd: float, on_exceed: str = "notify") -> TeamBudget:
    return TeamBudget.objects.update_or_create(team=team, defaults={
        "monthly_micros": int(usd * 1_000_000), "on_exceed": on_exceed})[0]


def test_a_submission_reserves_its_estimate_until_its_timeout(
        make_job: Callable[..., Job], team: Team) -> None:
    budget(team, 5)
    first = make_job("first", timeout_hours=4)
    assert first.estimate_micros == 4 * TWO_N1_4_HOURLY == 1_962_232
    first.refresh_from_db()
    assert str(first.estimate_hours) == "4.000"
    assert first.price_snapshot["hourly"]["on_demand"] == TWO_N1_4_HOURLY
    make_job("second", timeout_hours=4)
    # Two running jobs reserve $3.92 of $5; a third cannot fit, and nothing is recorded.
    with pytest.raises(budgets.BudgetExceeded) as refused:
        make_job("third", timeout_hours=4)
    message = str(refused.value)
    assert "$1.96" in message and "$1.08 left" in message and "$5.00 monthly" in message
    assert "$3.92 spent or reserved" in message and "timeout_hours" in message
    assert refused.value.left == 5_000_000 - 2 * 1_962_232
    assert Job.objects.filter(name="third").count() == 0
    # A shorter timeout fits.
    assert make_job("third", timeout_hours=2).estimate_micros == 2 * TWO_N1_4_HOURLY


def test_without_a_timeout_a_job_reserves_vertexs_seven_days(
        make_job: Callable[..., Job], team: Team) -> None:
    budget(team, 50)
    assert 168 * TWO_N1_4_HOURLY == 82_413_744
    with pytest.raises(budgets.BudgetExceeded, match=r"\$82.41 \(168 h, its timeout, at"):
        make_job("week")
    TeamBudget.objects.filter(team=team).delete()
    assert make_job("week").estimate_micros == 168 * TWO_N1_4_HOURLY


def test_the_api_refuses_with_the_numbers(team: Team, admin_user: Any, backend: FakeBackend,
                                          client: Client) -> None:
    budget(team, 1)
    client.force_login(admin_user)
    body = {"name": "big", "chief": {"machine_type": "n1-standard-4"}, "timeout_hours": 8}
    response = client.post(reverse("api-job-list"), data=json.dumps(body),
                           content_type="application/json")
    assert response.status_code == 400
    answer = response.json()
    assert "over budget" in answer["budget"][0] and "$1.96" in answer["budget"][0]
    assert answer["estimate_micros"] == 8 * N1_4_HOURLY
    assert answer["left_micros"] == 1_000_000 and answer["monthly_budget_micros"] == 1_000_000
    assert not Job.objects.exists()
    # The compose page says the same on its form.
    page = client.post(reverse("job-compose"), form_data(name="big", timeout_hours="8"))
    assert page.status_code == 400
    assert "over budget" in page.content.decode() and not Job.objects.exists()


def test_a_job_that_cannot_be_priced_is_refused_only_where_a_budget_applies(
        make_job: Callable[..., Job], team: Team) -> None:
    budget(team, 100)
    with pytest.raises(budgets.BudgetExceeded, match="cannot be priced"):
        make_job("east", timeout_hours=1, region="us-west2")
    TeamBudget.objects.filter(team=team).delete()
    job = make_job("east", timeout_hours=1, region="us-west2")
    assert job.price_snapshot is None and job.estimate_micros is None


def _run(job: Job, backend: FakeBackend, hours: float) -> None:
    """Submit the job and have it running for ``hours`` (Vertex's startTime that long ago)."""
    lifecycle.submit(job.pk)
    name = job.current_attempt().vertex_name
    backend.set_state(name, "JOB_STATE_RUNNING",
                      start_time=timezone.now() - timedelta(hours=hours))
    lifecycle.reconcile(job.pk)


def test_crossing_with_cancel_cancels_running_jobs_once(
        make_job: Callable[..., Job], team: Team, backend: FakeBackend, slack: SlackRecorder,
        eager: None, django_capture_on_commit_callbacks: Any) -> None:
    channel(team, ["budget"])
    job = make_job("long", timeout_hours=10)
    budget(team, 0.5, on_exceed="cancel")
    with django_capture_on_commit_callbacks(execute=True):
        _run(job, backend, hours=2)
    job.refresh_from_db()
    assert job.state == JobState.RUNNING
    attempt = job.current_attempt()
    assert attempt.price_snapshot["rate"] == "on_demand"
    # Two hours of two n1-standard-4 with their disks: $0.98 of a $0.50 budget.
    assert abs(job.cost_micros - 2 * TWO_N1_4_HOURLY) < 100
    with django_capture_on_commit_callbacks(execute=True):
        [crossing] = budgets.check_crossings()
        assert budgets.check_crossings() == [], "acted on once"
    assert crossing.action == "cancel" and crossing.jobs == [job.pk]
    assert crossing.spent_micros > 500_000
    job.refresh_from_db()
    assert job.state in (JobState.CANCELLING, JobState.CANCELLED)
    assert backend.cancelled == [attempt.vertex_name], "cancelled through the lifecycle, once"
    messages = [r.text for r in slack.to(HOOK_PATH) if "budget" in r.text]
    assert len(messages) == 1 and "being cancelled" in messages[0]
    assert "$0.50 monthly budget" in messages[0]
    assert job.events.filter(kind="budget").count() == 1


def test_crossing_with_notify_lets_jobs_run_and_tells_once_per_budget(
        make_job: Callable[..., Job], team: Team, backend: FakeBackend,
        django_capture_on_commit_callbacks: Any) -> None:
    channel(team, ["budget"])
    job = make_job("long", timeout_hours=10)
    budget(team, 0.5, on_exceed="notify")
    with django_capture_on_commit_callbacks(execute=False):
        _run(job, backend, hours=2)
        [crossing] = budgets.check_crossings()
        budgets.check_crossings()
    job.refresh_from_db()
    assert crossing.action == "notify" and job.state == JobState.RUNNING
    assert backend.cancelled == []
    sent = Notification.objects.filter(event="budget")
    assert sent.count() == 1 and "go on" in sent.get().detail["message"]
    # Below the budget again after raising it: nothing; crossing the new one: told again.
    budget(team, 3, on_exceed="notify")
    with django_capture_on_commit_callbacks(execute=False):
        assert budgets.check_crossings() == []
    budget(team, 0.75, on_exceed="notify")
    with django_capture_on_commit_callbacks(execute=False):
        assert len(budgets.check_crossings()) == 1
    assert Notification.objects.filter(event="budget").count() == 2
    assert BudgetCrossing.objects.count() == 2


def test_the_month_counts_ended_jobs_bills_and_running_jobs_reservations(
        make_job: Callable[..., Job], team: Team, backend: FakeBackend) -> None:
    running = make_job("running", timeout_hours=10)
    ended = make_job("ended", timeout_hours=10)
    Job.objects.filter(pk=ended.pk).update(state=JobState.SUCCEEDED, cost_micros=1_234_567)
    Job.objects.filter(pk=running.pk).update(cost_micros=5)
    assert spend.month_spent(team) == 1_234_572
    assert spend.month_committed(team) == 1_234_567 + running.estimate_micros


def test_budget_api_admins_change_it_members_read_it(
        team: Team, admin_user: Any, client: Client) -> None:
    url = reverse("api-team-budget", args=[team.slug])
    member = get_user_model().objects.create_user(username="mo")
    Membership.objects.create(user=member, team=team, role=Role.MEMBER)
    client.force_login(member)
    assert client.get(url).json()["monthly_budget_micros"] is None
    put = client.put(url, data=json.dumps({"monthly_budget_micros": 5_000_000}),
                     content_type="application/json")
    assert put.status_code == 403
    client.force_login(admin_user)
    put = client.put(url, data=json.dumps({"monthly_budget_micros": 5_000_000,
                                           "on_exceed": "cancel"}),
                     content_type="application/json")
    assert put.status_code == 200, put.content
    body = put.json()
    assert body["monthly_budget_micros"] == 5_000_000 and body["on_exceed"] == "cancel"
    assert body["left_micros"] == 5_000_000 and body["spent_micros"] == 0
    bad = client.put(url, data=json.dumps({"monthly_budget_micros": -1, "on_exceed": "explode"}),
                     content_type="application/json")
    assert bad.status_code == 400 and set(bad.json()) == {"monthly_budget_micros", "on_exceed"}
    # Past bigint once: refused on the field, not a server error, and nothing changes.
    huge = client.put(url, data=json.dumps({"monthly_budget_micros": 883135167348559595962368}),
                      content_type="application/json")
    assert huge.status_code == 400 and "monthly_budget_micros" in huge.json()
    assert client.get(url).json()["monthly_budget_micros"] == 5_000_000
    other = Team.objects.create(name="Other", slug="other")
    assert client.get(reverse("api-team-budget", args=[other.slug])).status_code == 404
