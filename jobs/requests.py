"""Validating a job request (the form's fields, as a dict) the same way for form and API."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from jobs import composer
from jobs.models import Team


@dataclass
class CheckedRequest:
    request: dict[str, Any]
    composition: composer.Composition | None
    # Keyed by request field path ("chief.accelerator_count"); "" for the request as a whole.
    errors: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors


def check(request: dict[str, Any], team: Team | None) -> CheckedRequest:
    """Compose and validate. Changes nothing: safe for a dry run."""
    request = {
        **request,
        "name": (request.get("name") or "").strip(),
        "region": request.get("region") or settings.VERTEX_REGION,
    }
    errors: dict[str, list[str]] = {}
    if team is None:
        errors["team"] = ["choose a team you can submit to"]
    composition = composer.compose(request)
    for key, messages in composition.errors.items():
        errors.setdefault(key, []).extend(messages)
    return CheckedRequest(request=request, composition=composition, errors=errors)


def nested(errors: dict[str, list[str]]) -> dict[str, Any]:
    """{"chief.accelerator_count": [...]} -> {"chief": {"accelerator_count": [...]}}."""
    out: dict[str, Any] = {}
    for key, messages in errors.items():
        if not key:
            out.setdefault("non_field_errors", []).extend(messages)
            continue
        *parents, leaf = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node.setdefault(leaf, []).extend(messages)
    return out
