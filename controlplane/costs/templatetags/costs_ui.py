"""Money in templates: integer micro-dollars shown as dollars."""

from __future__ import annotations

from django import template

from vertexplan.pricing import format_usd

register = template.Library()


@register.filter
def usd(micros: int | None, places: int = 2) -> str:
    """'$1,234.57' (half-up); a dash where there is no figure (a rate that does not apply)."""
    if micros is None or micros == "":
        return "\N{EN DASH}"
    return format_usd(int(micros), int(places))
