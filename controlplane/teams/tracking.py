"""A team's experiment tracking: the W&B entity and project its jobs log their runs to, and the
API key they log with.

Jobs get them as environment variables when they are submitted (controlplane/runs/lifecycle.py):
WANDB_ENTITY and WANDB_PROJECT in the CustomJob the product stores, shows and exports, and
WANDB_API_KEY only in the request sent to Vertex, never stored with the job. Without a key the
trainers log offline (WANDB_MODE=offline) and the runs are uploaded later with `wandb sync`.
In production the key belongs in Secret Manager, read by the job's service account; the
environment variable is what a CustomJob can carry without one.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from controlplane.core import secrets
from controlplane.teams.models import Team, TrackingSettings

logger = logging.getLogger(__name__)

# W&B entity and project names (the trainer puts them into the run's URL: trainers/job/tracking.py).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
# W&B API keys are 40 hex characters, or longer with a prefix (dedicated servers): printable,
# no spaces or quotes.
_KEY = re.compile(r"[A-Za-z0-9_.:-]{20,200}")
FIELDS = ("wandb_entity", "wandb_project", "wandb_api_key")


class TrackingError(ValueError):
    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(str(errors))
        self.errors = errors


def describe(team: Team) -> dict[str, Any]:
    """What may be shown of the settings: the names, and only whether a key is set."""
    row = TrackingSettings.objects.filter(team=team).first()
    return {"wandb_entity": row.wandb_entity if row else "",
            "wandb_project": row.wandb_project if row else "",
            "wandb_api_key_set": bool(row and row.wandb_api_key)}


def _problems(changes: Mapping[str, Any]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for name in ("wandb_entity", "wandb_project"):
        value = changes.get(name)
        if name in changes and not isinstance(value, str):
            errors[name] = ["a string"]
        elif value and not _NAME.fullmatch(value):
            errors[name] = ["letters, digits, '_', '-' and '.', starting with a letter or "
                            "digit, at most 128 characters (as W&B names them)"]
    key = changes.get("wandb_api_key")
    if "wandb_api_key" in changes and not isinstance(key, str):
        errors["wandb_api_key"] = ["a string; empty to remove the key"]
    elif key and not _KEY.fullmatch(key):
        errors["wandb_api_key"] = ["not a W&B API key: 20 to 200 letters, digits, '_', '-', "
                                   "'.' or ':' (empty to remove the key)"]
    return errors


def update(team: Team, changes: Mapping[str, Any]) -> TrackingSettings:
    """Apply a partial change; an empty wandb_api_key removes the key."""
    unknown = sorted(set(changes) - set(FIELDS))
    errors = {name: ["unknown field"] for name in unknown} | _problems(changes)
    if errors:
        raise TrackingError(errors)
    with transaction.atomic():
        row, _ = TrackingSettings.objects.select_for_update().get_or_create(team=team)
        for name in ("wandb_entity", "wandb_project"):
            if name in changes:
                setattr(row, name, changes[name])
        if "wandb_api_key" in changes:
            key = changes["wandb_api_key"]
            row.wandb_api_key = secrets.encrypt(key) if key else ""
        if row.wandb_project and not row.wandb_entity:
            raise TrackingError({"wandb_entity": [
                "required with a project: a run's W&B address is <entity>/<project>"]})
        if row.wandb_api_key and not row.wandb_project:
            raise TrackingError({"wandb_project": ["required with an API key"]})
        row.updated_at = timezone.now()
        row.save()
    return row


def job_environment(team: Team) -> tuple[dict[str, str], dict[str, str]]:
    """(what a job's stored spec may show, what only the request to Vertex carries): empty
    unless the team has a W&B project."""
    row = TrackingSettings.objects.filter(team=team).first()
    if row is None or not row.wandb_project:
        return {}, {}
    shown = {"WANDB_ENTITY": row.wandb_entity, "WANDB_PROJECT": row.wandb_project}
    try:
        key = secrets.decrypt(row.wandb_api_key) if row.wandb_api_key else ""
    except secrets.SecretUnreadable:
        # Encrypted under a key this process lacks: the job still runs and logs offline,
        # rather than every job of the team failing to submit.
        logger.warning("team %s: its W&B API key cannot be decrypted; jobs log offline",
                       team.slug)
        key = ""
    if not key:
        return {**shown, "WANDB_MODE": "offline"}, {}
    return shown, {"WANDB_API_KEY": key}
