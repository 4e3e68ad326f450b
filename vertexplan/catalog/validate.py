"""validate_custom_job: every rule in ``rules.RULES`` over one CustomJob in REST JSON form."""

from __future__ import annotations

from vertexplan.catalog.errors import FieldError
from vertexplan.catalog.lookups import get_region
from vertexplan.catalog.normalize import normalize_custom_job
from vertexplan.catalog.rules import RULES
from vertexplan.catalog.view import build_view


def validate_custom_job(job: dict, region: str | None = None) -> list[FieldError]:
    """Errors of a CustomJob given as Vertex's REST JSON (camelCase), in rule order.

    An empty list means the job is valid as far as the catalogue knows. ``region``, when given,
    must be a catalogue region (UnknownRegionError otherwise, a ValueError: it is the caller's
    setting, not a field of the job) and picks region-specific suggestions. The job is not
    modified.
    """
    if region is not None:
        get_region(region)
    # gcloud's and the SDK's spellings (snake_case, a single pool, a scalar args) read as the
    # REST JSON they stand for; error paths name the camelCase fields.
    job, _ = normalize_custom_job(job)
    view = build_view(job, region)
    errors: list[FieldError] = []
    seen: set[FieldError] = set()
    for rule in RULES:
        for error in rule(view):
            if error not in seen:
                seen.add(error)
                errors.append(error)
    return errors
