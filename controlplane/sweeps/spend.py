"""What a team's sweeps cost in a month, counted in its month by controlplane.costs
(registered in SweepsConfig.ready): a sweep counts in the month it was created, as a job does.
Its trials are jobs of kind trial that never count as jobs; their money is the sweep's."""

from __future__ import annotations

from datetime import date, datetime

from django.db.models import Q, QuerySet, Sum

from controlplane.costs import spend
from controlplane.sweeps.models import ACTIVE_STATES, Sweep
from controlplane.teams.models import Team
from vertexplan.summaries import accelerator_summary


def _month(team: Team, month: date) -> QuerySet[Sweep]:
    return Sweep.objects.filter(team=team, created_at__year=month.year,
                                created_at__month=month.month)


def month_micros(team: Team, month: date) -> int:
    """Billed: the trials' running cost, as last reconciled."""
    return int(_month(team, month).aggregate(s=Sum("cost_micros"))["s"] or 0)


def month_series(team: Team, month: date, now: datetime) -> list[spend.SpendPart]:
    """The same, by day for the costs page's charts: one series per sweep, its cost spread
    over the days it ran (as a job's is), under its trials' accelerators."""
    return [spend.SpendPart(
        name=f"Sweep {sweep.name} #{sweep.pk}",
        kind=accelerator_summary({"jobSpec": (sweep.tuning_job or {}).get("trialJobSpec")})
        or "CPU",
        days=spend.spread_by_day(sweep.cost_micros, sweep.started_at, sweep.ended_at or now,
                                 sweep.created_at))
        for sweep in _month(team, month).order_by("created_at", "pk")]


def month_committed(team: Team, month: date) -> int:
    """Billed by ended sweeps, and reserved by active ones: each its whole estimate (every
    trial), or its bill so far if that is more."""
    sweeps = _month(team, month)
    ended = sweeps.filter(~Q(state__in=ACTIVE_STATES)).aggregate(s=Sum("cost_micros"))["s"]
    active = sum(max(cost, estimate or 0) for cost, estimate in sweeps.filter(
        state__in=ACTIVE_STATES).values_list("cost_micros", "estimate_micros"))
    return int((ended or 0) + active)
