"""What the budget API and the team spend page show: the month's standing and the spend
series for the charts (by job and by accelerator, per day)."""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime
from typing import Any

from django.utils import timezone

from controlplane.core import palette
from controlplane.costs import spend
from controlplane.costs.budgets import standing
from controlplane.costs.models import BudgetCrossing
from controlplane.runs.models import Job, JobKind
from controlplane.teams.models import Team
from vertexplan.summaries import accelerator_summary


def summary(team: Team) -> dict[str, Any]:
    now = standing(team)
    budget = now.budget
    return {
        "team": team.slug,
        "month": spend.month_start().isoformat(),
        "monthly_budget_micros": budget.monthly_micros if budget else None,
        "on_exceed": budget.on_exceed if budget else None,
        "spent_micros": now.spent,
        "committed_micros": now.committed,
        "left_micros": now.left,
        "over": now.over,
        "updated_at": budget.updated_at.isoformat() if budget else None,
        "crossings": [
            {"month": c.month.isoformat(), "monthly_budget_micros": c.monthly_micros,
             "spent_micros": c.spent_micros, "action": c.action, "jobs": c.jobs,
             "crossed_at": c.crossed_at.isoformat()}
            for c in BudgetCrossing.objects.filter(team=team)[:12]
        ],
    }


def spend_series(team: Team, month: date | None = None,
                 now: datetime | None = None) -> dict[str, Any]:
    """Cumulative spend over the days of the month, one series per job and per accelerator:
    each job's cost spread over the UTC days it ran, so a three-day run is three days' bars,
    not one on the day it began. The month's jobs are those created in it, as the budget counts
    them; what else the team pays for (sweeps, Ray clusters: spend.register_spend_series) has
    its series too, so the charts add up to the month's spend."""
    month = month or spend.month_start()
    now = now or timezone.now()
    jobs = list(Job.objects.filter(team=team, kind=JobKind.JOB, created_at__year=month.year,
                                   created_at__month=month.month).order_by("created_at"))
    parts = [spend.SpendPart(name=f"{job.name} #{job.pk}",
                             kind=accelerator_summary(job.custom_job) or "CPU",
                             days=_spread_over_days(job, now)) for job in jobs]
    parts += spend.other_series(team, month, now)
    by_job: dict[str, dict[str, int]] = {}
    by_accelerator: dict[str, dict[str, int]] = defaultdict(dict)
    for part in parts:
        by_job[part.name] = part.days
        for day, micros in part.days.items():
            by_accelerator[part.kind][day] = by_accelerator[part.kind].get(day, 0) + micros
    return {"month": month.isoformat(), "by_job": _cumulative(by_job),
            "by_accelerator": _cumulative(dict(by_accelerator))}


def _spread_over_days(job: Job, now: datetime) -> dict[str, int]:
    """The job's cost by UTC day, in proportion to its running time (start to end, or now)
    on each; whole micro-dollars that add up to the cost exactly. A job that never ran: all
    on the day it was created."""
    return spend.spread_by_day(job.cost_micros, job.started_at, job.ended_at or now,
                               job.created_at)


def _cumulative(series: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    out = []
    for (name, per_day), color in zip(series.items(), palette.colors(len(series)), strict=True):
        days = sorted(per_day)
        running, values = 0, []
        for day in days:
            running += per_day[day]
            values.append(running)
        # Dollars for the chart's axis only; the figures stay micro-dollars.
        out.append({"name": name, "days": days, "micros": values, "color": color,
                    "usd": [v / 1_000_000 for v in values]})
    return out
