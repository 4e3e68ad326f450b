"""Money in templates: integer micro-dollars shown as dollars, and a job's hourly rate."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django import template

from controlplane.costs.spend import submitted_hourly_micros
from vertexplan.pricing import display_usd

register = template.Library()

DASH = "\N{EN DASH}"


def _micros(value: Any) -> int | None:
    """Whole micro-dollars from what a template hands over (an int, a Decimal, a numeric
    string); None for anything else, so a page never fails on an amount."""
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        number = Decimal(str(value))
    except (InvalidOperation, ValueError):
        return None
    if not number.is_finite():
        return None
    return int(number.to_integral_value())


@register.filter
def usd(micros: Any, places: Any = 2) -> str:
    """'$1,234.57', '$0.0014' below a dollar (never '$0.00' for a cost that is not zero),
    '-$3.20' for an overspent budget; a dash where there is no figure. Never raises."""
    amount = _micros(micros)
    if amount is None:
        return DASH
    try:
        wanted = max(0, min(6, int(places)))
    except (TypeError, ValueError):
        wanted = 2
    return display_usd(amount, wanted)


@register.filter
def usd_over(micros: Any) -> str:
    """What is left of a budget: '$12.00', or 'over by $3.20' once the spend passed it."""
    amount = _micros(micros)
    if amount is None:
        return DASH
    if amount < 0:
        return f"over by {display_usd(-amount)}"
    return display_usd(amount)


@register.filter
def at_rate(totals: Any, rate: Any) -> Any:
    """One rate's figure of an estimate's totals ({"on_demand": ..., "spot": ..., "flex": ...})."""
    return totals.get(rate) if isinstance(totals, dict) and isinstance(rate, str) else None


# The job's hourly rate from its price snapshot: what the costs pages show instead of the cap at
# its timeout, which is not what the job is expected to cost.
register.filter("hourly_micros", submitted_hourly_micros)
