"""A job file as the body the API takes: the control plane's own job request (YAML or JSON:
name, chief, workers, ...), or what the import takes (gcloud's `--config` CustomJobSpec YAML,
a Vertex CustomJob in REST JSON), which the server's import turns into that request."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import yaml

from vcp import api
from vertex_control_plane_client import AuthenticatedClient

VERTEX_KEYS = {"workerPoolSpecs", "worker_pool_specs", "jobSpec", "job_spec"}


def read(path: Path) -> tuple[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise click.BadParameter(f"cannot read {path}: {exc}", param_hint="-f") from exc
    try:
        return text, yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise click.BadParameter(f"{path} is not YAML or JSON: {exc}", param_hint="-f") from exc


@dataclass(frozen=True)
class Kind:
    """What a file may hold for one kind of resource: the Vertex document the server's import
    turns into a request (recognised by its top-level keys), and the request's name field."""

    noun: str
    vertex_keys: frozenset[str]
    import_path: str
    name_field: str
    vertex_name_field: str  # a Vertex document's own name for it (gcloud files omit it)
    region_in_body: bool = False  # the import takes the region in its body, not the query


JOB = Kind("job", frozenset(VERTEX_KEYS), "/api/v1/jobs/import/", "name", "displayName")
SWEEP = Kind("sweep", frozenset({"studySpec", "trialJobSpec"}), "/api/v1/sweeps/import/",
             "display_name", "displayName", region_in_body=True)


def request_body(client: AuthenticatedClient, path: Path, kind: Kind = JOB, *,
                 name: str | None = None, team: str | None = None,
                 region: str | None = None) -> dict[str, Any]:
    """The request a file holds: a Vertex document goes through the server's import (its
    errors refuse it, its warnings are shown), anything else is the request itself."""
    text, document = read(path)
    if not isinstance(document, dict):
        raise click.BadParameter(f"{path}: a {kind.noun} is a mapping of fields",
                                 param_hint="-f")
    if kind.vertex_keys & set(document):
        asked = {"region": region} if region else {}
        body_in = {"text": text, **(asked if kind.region_in_body else {})}
        imported = api.send(client, "POST", kind.import_path, body=body_in,
                            params=None if kind.region_in_body else asked or None).json()
        errors = dict(imported.get("errors") or {})
        if kind.vertex_name_field not in document:
            # A gcloud --config file has no name: gcloud takes it from --display-name, and
            # vcp from --name or the file's name (below).
            errors.pop(kind.vertex_name_field, None)
        if errors:
            raise api.Refused(400, errors)
        for warning in imported.get("warnings") or []:
            click.echo(f"warning: {warning}", err=True)
        body = dict(imported["request"])
    else:
        body = dict(document)
    if name:
        body[kind.name_field] = name
    if not body.get(kind.name_field):
        body[kind.name_field] = (re.sub(r"[^A-Za-z0-9_-]+", "-", path.stem).strip("-")
                                 or kind.noun)
    if team:
        body["team"] = team
    if region:
        body["region"] = region
    return body


def job_body(client: AuthenticatedClient, path: Path, *, name: str | None = None,
             team: str | None = None, region: str | None = None) -> dict[str, Any]:
    return request_body(client, path, JOB, name=name, team=team, region=region)


def emit_document(body: dict[str, Any], output: str) -> None:
    """A request body printed as a file to edit and submit: YAML, or JSON with -o json."""
    if output == "json":
        click.echo(json.dumps(body, indent=2))
    else:
        click.echo(yaml.safe_dump(body, sort_keys=False, default_flow_style=False).rstrip())
