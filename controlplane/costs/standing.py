"""What the budget API and the team spend page show: the month's standing and the spend
series for the charts (by job and by accelerator, per day)."""

from __future__ import annotations

from collections import defaultdict
from datetime import date
from typing import Any

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


def spend_series(team: Team, month: date | None = None) -> dict[str, Any]:
    """Cumulative spend over the month's days, one series per job and per accelerator."""
    month = month or spend.month_start()
    jobs = list(Job.objects.filter(team=team, kind=JobKind.JOB, created_at__year=month.year,
                                   created_at__month=month.month).order_by("created_at"))
    by_job: dict[str, dict[str, int]] = {}
    by_accelerator: dict[str, dict[str, int]] = defaultdict(dict)
    for job in jobs:
        day = job.created_at.date().isoformat()
        label = f"{job.name} #{job.pk}"
        by_job[label] = {day: job.cost_micros}
        kind = accelerator_summary(job.custom_job) or "CPU"
        by_accelerator[kind][day] = by_accelerator[kind].get(day, 0) + job.cost_micros
    return {"month": month.isoformat(), "by_job": _cumulative(by_job),
            "by_accelerator": _cumulative(dict(by_accelerator))}


def _cumulative(series: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    out = []
    for name, per_day in series.items():
        days = sorted(per_day)
        running, values = 0, []
        for day in days:
            running += per_day[day]
            values.append(running)
        # Dollars for the chart's axis only; the figures stay micro-dollars.
        out.append({"name": name, "days": days, "micros": values,
                    "usd": [v / 1_000_000 for v in values]})
    return out
