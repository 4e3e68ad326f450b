"""Costs where people see them: the job's API and page (cost so far, final cost, lost compute
apart), the job list, the compose form's live estimate with its price date, the team's costs
page with its budget form and charts; the price snapshot stored per attempt."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from controlplane.costs.models import TeamBudget
from controlplane.runs import lifecycle
from controlplane.runs.models import Job, JobRestart, RestartCause
from controlplane.teams.models import Membership, Role, Team
from tests.compose.test_compose_page import form_data
from tests.fakes import FakeBackend
from tests.vertexplan.pricing.test_cited_paths import OLD_SOURCE, missing

# Two n1-standard-4 (chief and worker) with 100 GB pd-ssd each, us-central1, spot, per hour.
TWO_N1_4_SPOT = 2 * (95_510 + 26_780)


def running_spot_job(make_job: Callable[..., Job], backend: FakeBackend) -> Job:
    """A spot job started an hour ago whose chief was preempted for 10 minutes, 5 minutes of
    work after its last checkpoint; the worker ran throughout."""
    job = make_job("spot", spot=True, timeout_hours=2)
    lifecycle.submit(job.pk)
    attempt = job.current_attempt()
    start = timezone.now() - timedelta(hours=1)
    backend.set_state(attempt.vertex_name, "JOB_STATE_RUNNING", start_time=start)
    lifecycle.reconcile(job.pk)
    saved = job.events.create(kind="checkpoint_saved", attempt=1, step=100,
                              timestamp=start + timedelta(minutes=15),
                              data={"step": 100, "path": "gs://b/step-100"})
    JobRestart.objects.create(job=job, attempt=1, replica="workerpool0-0", ordinal=1,
                              cause=RestartCause.PREEMPTION,
                              occurred_at=start + timedelta(minutes=20),
                              resumed_at=start + timedelta(minutes=30), checkpoint=saved,
                              resumed_from_step=100)
    return job


def test_the_attempt_stores_the_prices_it_is_billed_at(make_job: Callable[..., Job],
                                                       backend: FakeBackend) -> None:
    job = running_spot_job(make_job, backend)
    attempt = job.current_attempt()
    assert attempt.price_snapshot["rate"] == "spot"
    assert attempt.price_snapshot["region"] == "us-central1"
    assert attempt.price_snapshot["hourly"]["spot"] == TWO_N1_4_SPOT
    assert job.price_snapshot["hourly"] == attempt.price_snapshot["hourly"]


def test_api_detail_and_list_show_cost_so_far_and_lost_compute(
        make_job: Callable[..., Job], backend: FakeBackend, admin_user: Any,
        client: Client) -> None:
    began = timezone.now()
    job = running_spot_job(make_job, backend)
    client.force_login(admin_user)
    cost = client.get(reverse("api-job-detail", args=[job.pk])).json()["cost"]
    assert cost["status"] == "so far"
    # Chief: 50 of 60 minutes billed; worker: 60. Mean of the pool... each pool is one
    # replica: chief 50 min, worker 60 min, at the spot rate of one n1-standard-4 + disk.
    one = 95_510 + 26_780
    chief, worker = (95_510 * 50 + 30) // 60 + 26_780 * 50 // 60, one
    # Both replicas kept running for the seconds the test took since the job's start was set
    # (over a second on a loaded machine): that much more is billed, and no more.
    drift = math.ceil((timezone.now() - began).total_seconds() * 2 * one / 3600) + 2
    assert -2 <= cost["billed_micros"] - (chief + worker) <= drift, cost
    # Lost: 10:15 checkpoint -> 10:20 preemption, 5 minutes of the chief.
    assert cost["lost_micros"] == (one * 5 + 30) // 60 == 10_191
    assert cost["useful_micros"] == cost["billed_micros"] - 10_191
    [preemption] = cost["breakdown"]["preemptions"]
    assert preemption["not_billed_s"] == 600 and preemption["lost_s"] == 300
    assert cost["estimate_micros"] == 2 * TWO_N1_4_SPOT
    assert cost["price_retrieved"] >= "2026"
    Job.objects.filter(pk=job.pk).update(cost_micros=cost["billed_micros"], lost_micros=10_191)
    [row] = client.get(reverse("api-job-list")).json()["results"]
    assert row["cost_micros"] == cost["billed_micros"] and row["lost_micros"] == 10_191


def test_job_page_and_list_show_the_cost(make_job: Callable[..., Job], backend: FakeBackend,
                                          admin_user: Any, client: Client) -> None:
    job = running_spot_job(make_job, backend)
    client.force_login(admin_user)
    page = client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert "Cost so far" in page and 'id="cost-lost">$0.01<' in page
    assert "cost-chart-data" in page and "workerpool0-0" in page
    partial = client.get(reverse("job-partial", args=[job.pk, "cost"])).content.decode()
    assert 'id="job-cost"' in partial and "every 10s" in partial
    Job.objects.filter(pk=job.pk).update(cost_micros=1_234_567)
    rows = client.get(reverse("job-list")).content.decode()
    assert "$1.23" in rows


def test_compose_panel_estimates_live_with_the_price_date(
        team: Team, admin_user: Any, client: Client) -> None:
    client.force_login(admin_user)
    compose = client.get(reverse("job-compose")).content.decode()
    assert 'hx-trigger="change from:#compose-form' in compose and "estimate_hours" in compose
    panel = client.post(reverse("job-validate"),
                        form_data(timeout_hours="2", chief_boot_disk_size_gb="100"))
    html = panel.content.decode()
    # Nothing says how long it runs: one n1-standard-4 + 100 GB pd-ssd is 245,279
    # micro-dollars an hour on demand, and its 2 h timeout caps it at twice that, labelled so.
    assert 'id="estimate-hourly-on-demand">$0.245<' in html
    assert 'id="estimate-cap-on-demand">$0.49<' in html and 'id="estimate-on-demand"' not in html
    assert "Prices read 2026-" in html and "if it runs to its 2 h timeout" in html
    asked = client.post(reverse("job-validate"), {**form_data(), "estimate_hours": "10"})
    assert 'id="estimate-on-demand">$2.45<' in asked.content.decode()


def test_the_costs_pages_show_the_rate_and_the_timeout_as_a_cap_not_an_estimate(
        make_job: Callable[..., Job], team: Team, admin_user: Any, client: Client) -> None:
    """A job's stored estimate is its cost until its timeout (what the budget reserves): the
    pages show the hourly rate it was submitted at and that figure as the cap it is."""
    job = make_job("capped", timeout_hours=2)
    hourly = 2 * 245_279  # chief and worker: n1-standard-4 + 100 GB pd-ssd, on demand
    assert job.estimate_micros == 2 * hourly
    client.force_login(admin_user)
    page = client.get(reverse("team-costs", args=[team.slug])).content.decode()
    assert ">Estimate<" not in page and ">Per hour<" in page and ">At most (timeout)<" in page
    assert '<td class="num job-hourly">$0.491/h</td>' in page
    assert '<td class="num job-cap muted">$0.98</td>' in page
    partial = client.get(reverse("job-partial", args=[job.pk, "cost"])).content.decode()
    assert 'id="cost-hourly">$0.491/h<' in partial
    assert 'id="cost-cap">$0.98 <span class="muted small">if it runs to its 2 h timeout' in partial
    assert "<dt>Estimate</dt>" not in partial


def test_a_job_priced_before_the_table_moved_cites_where_it_is_now(
        make_job: Callable[..., Job]) -> None:
    from controlplane.costs import spend

    job = make_job("old")
    job.price_snapshot["table"]["source"] = OLD_SOURCE  # as jobs stored it before the move
    Job.objects.filter(pk=job.pk).update(price_snapshot=job.price_snapshot)
    source = spend.cost_report(Job.objects.get(pk=job.pk))["price_source"]
    assert "vertexplan/pricing/data/" in source and missing(source) == []


def test_team_costs_page_budget_form_for_admins_only(team: Team, admin_user: Any,
                                                     client: Client) -> None:
    url = reverse("team-costs", args=[team.slug])
    client.force_login(admin_user)
    page = client.get(url).content.decode()
    assert "spend-by-accelerator" in page and "spend-data" in page and "budget-form" in page
    saved = client.post(url, {"monthly_usd": "250.50", "on_exceed": "cancel"})
    assert saved.status_code == 302
    budget = TeamBudget.objects.get(team=team)
    assert (budget.monthly_micros, budget.on_exceed) == (250_500_000, "cancel")
    # The field shows the current budget as it was entered.
    assert 'value="250.50"' in client.get(url).content.decode()
    member = get_user_model().objects.create_user(username="mo")
    Membership.objects.create(user=member, team=team, role=Role.MEMBER)
    client.force_login(member)
    page = client.get(url).content.decode()
    assert "$250.50" in page and "budget-form" not in page
    assert client.post(url, {"monthly_usd": "1", "on_exceed": "notify"}).status_code == 403
    spend = client.get(reverse("api-team-spend", args=[team.slug])).json()
    assert spend["by_job"] == [] and json.dumps(spend)


def test_team_costs_page_renders_once_the_spend_passes_the_budget(
        make_job: Callable[..., Job], team: Team, admin_user: Any, client: Client) -> None:
    """The budget below the month's spend: the page says by how much, never a server error."""
    job = make_job("over")
    Job.objects.filter(pk=job.pk).update(cost_micros=7_500_000)
    TeamBudget.objects.create(team=team, monthly_micros=5_000_000, on_exceed="notify")
    client.force_login(admin_user)
    response = client.get(reverse("team-costs", args=[team.slug]))
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="left">over by $' in html and "Over budget this month." in html
    TeamBudget.objects.filter(team=team).update(monthly_micros=0)
    assert client.get(reverse("team-costs", args=[team.slug])).status_code == 200


def test_one_cost_figure_per_job_below_a_cent(make_job: Callable[..., Job],
                                              backend: FakeBackend, admin_user: Any,
                                              client: Client) -> None:
    """A job that cost a fraction of a cent reads the same in the list and on its page."""
    job = make_job("tiny")
    Job.objects.filter(pk=job.pk).update(cost_micros=1_400)
    client.force_login(admin_user)
    rows = client.get(reverse("job-list")).content.decode()
    assert "$0.0014" in rows and "$0.00<" not in rows


def test_the_stored_cost_of_an_ended_job_is_the_one_its_page_shows(
        make_job: Callable[..., Job], backend: FakeBackend) -> None:
    """Refreshed while it ran and again once it ended: the list's figure and the job page's
    are the same number."""
    from controlplane.costs import spend

    job = make_job("ends")
    lifecycle.submit(job.pk)
    attempt = job.current_attempt()
    start = timezone.now() - timedelta(minutes=30)
    backend.set_state(attempt.vertex_name, "JOB_STATE_RUNNING", start_time=start)
    lifecycle.reconcile(job.pk)
    running = Job.objects.get(pk=job.pk).cost_micros
    backend.set_state(attempt.vertex_name, "JOB_STATE_SUCCEEDED", start_time=start,
                      end_time=start + timedelta(minutes=10))
    lifecycle.reconcile(job.pk)
    job.refresh_from_db()
    shown = spend.cost_report(job)["billed_micros"]
    assert job.state == "SUCCEEDED" and 0 < job.cost_micros == shown < running
    assert spend.cost_so_far_micros(job) == shown


def test_clearing_the_budget_field_removes_the_budget(team: Team, admin_user: Any,
                                                      client: Client) -> None:
    url = reverse("team-costs", args=[team.slug])
    client.force_login(admin_user)
    assert client.post(url, {"monthly_usd": "100", "on_exceed": "notify"}).status_code == 302
    cleared = client.post(url, {"monthly_usd": "", "on_exceed": "notify"})
    assert cleared.status_code == 302, cleared.content.decode()[:2000]
    assert not TeamBudget.objects.filter(team=team).exists()
    page = client.get(url).content.decode()
    assert 'id="monthly-budget">none<' in page and "has no budget now" in page
    # A bad amount still changes nothing and says why.
    client.post(url, {"monthly_usd": "100", "on_exceed": "notify"})
    refused = client.post(url, {"monthly_usd": "-5", "on_exceed": "notify"})
    assert refused.status_code == 400 and "greater than or equal to 0" in refused.content.decode()
    assert TeamBudget.objects.get(team=team).monthly_micros == 100_000_000
