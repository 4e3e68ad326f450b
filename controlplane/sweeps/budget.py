"""A team's running sweeps when its month's spend crosses its budget: the same choice as its
jobs (controlplane.costs.budgets), registered with costs in SweepsConfig.ready since costs may
not import sweeps. Each sweep is told once per crossing and, where the team chose to cancel,
cancelled through its one cancel path with the reason "budget"."""

from __future__ import annotations

import logging

from django.db import transaction

from controlplane.costs.budgets import Crossed
from controlplane.sweeps import lifecycle
from controlplane.sweeps.models import ACTIVE_STATES, CancelReason, Sweep, SweepBudgetNotice

logger = logging.getLogger(__name__)


def on_budget_crossed(crossed: Crossed) -> list[int]:
    """Returns the ids of the sweeps acted on now (none that an earlier call acted on)."""
    acted = []
    for sweep_id in Sweep.objects.filter(team=crossed.team, state__in=ACTIVE_STATES
                                         ).values_list("pk", flat=True):
        # The notice and the cancel commit together: a crossing acts on a sweep once.
        with transaction.atomic():
            _, created = SweepBudgetNotice.objects.get_or_create(
                sweep_id=sweep_id, key=crossed.key, defaults={
                    "cancelled": crossed.cancel, "message": crossed.message,
                    "spent_micros": crossed.spent_micros,
                    "budget_micros": crossed.budget_micros})
            if not created:
                continue
            if crossed.cancel:
                lifecycle.request_cancel(sweep_id, reason=CancelReason.BUDGET)
        acted.append(sweep_id)
    if acted:
        logger.warning("team %s: sweeps %s %s", crossed.team.slug, acted,
                       "cancelled for its budget" if crossed.cancel else "told of its budget")
    return acted
