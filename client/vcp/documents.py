"""A job file as the body the API takes: the control plane's own job request (YAML or JSON:
name, chief, workers, ...), or what the import takes (gcloud's `--config` CustomJobSpec YAML,
a Vertex CustomJob in REST JSON), which the server's import turns into that request."""

from __future__ import annotations

import json
import re
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


def job_body(client: AuthenticatedClient, path: Path, *, name: str | None = None,
             team: str | None = None, region: str | None = None) -> dict[str, Any]:
    text, document = read(path)
    if not isinstance(document, dict):
        raise click.BadParameter(f"{path}: a job is a mapping of fields", param_hint="-f")
    if VERTEX_KEYS & set(document):
        params = {"region": region} if region else None
        imported = api.send(client, "POST", "/api/v1/jobs/import/", body={"text": text},
                            params=params).json()
        errors = dict(imported.get("errors") or {})
        if "displayName" not in document:
            # A gcloud --config file has no name: gcloud takes it from --display-name, and
            # vcp from --name or the file's name (below).
            errors.pop("displayName", None)
        if errors:
            raise api.Refused(400, errors)
        for warning in imported.get("warnings") or []:
            click.echo(f"warning: {warning}", err=True)
        body = dict(imported["request"])
    else:
        body = dict(document)
    if name:
        body["name"] = name
    if not body.get("name"):
        body["name"] = re.sub(r"[^A-Za-z0-9_-]+", "-", path.stem).strip("-") or "job"
    if team:
        body["team"] = team
    if region:
        body["region"] = region
    return body


def emit_document(body: dict[str, Any], output: str) -> None:
    """A request body printed as a file to edit and submit: YAML, or JSON with -o json."""
    if output == "json":
        click.echo(json.dumps(body, indent=2))
    else:
        click.echo(yaml.safe_dump(body, sort_keys=False, default_flow_style=False).rstrip())
