"""`vcp sweeps`: hyperparameter tuning jobs. A sweep file is the control plane's own sweep
request (display_name, metrics, parameters, trial_job, ...) or what `gcloud ai hp-tuning-jobs
create --config` takes (a HyperparameterTuningJob with studySpec and trialJobSpec, YAML or
REST JSON), which the server's import turns into that request."""

from __future__ import annotations

import uuid
from pathlib import Path

import click

from vcp import api, documents, waiting
from vcp.context import Context, pass_context
from vertex_control_plane_client.api.sweeps import (
    sweeps_cancel_create,
    sweeps_clone_retrieve,
    sweeps_list,
    sweeps_retrieve,
)

SWEEP_COLUMNS = ("id", "name", "team", "state", "metric_id", "goal", "max_trial_count",
                 "parallel_trial_count", "cost_micros", "created_at")
TRIAL_COLUMNS = ("trial_id", "state", "best", "objective", "parameters", "final_step")
TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}

SWEEP_FILE = click.option("-f", "--file", "path", required=True,
                          type=click.Path(exists=True, dir_okay=False, path_type=Path),
                          help="gcloud hp-tuning-jobs YAML, a HyperparameterTuningJob in REST "
                               "JSON, or a sweep request.")


@click.group()
def sweeps() -> None:
    """List, inspect, submit, validate, cancel, clone and export sweeps (tuning jobs)."""


@sweeps.command("list")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0)
@pass_context
def sweeps_list_command(ctx: Context, limit: int, offset: int) -> None:
    """The sweeps of your teams, newest first."""
    page = api.call(sweeps_list.sync_detailed, client=ctx.client, limit=limit, offset=offset)
    ctx.emit(page.results, SWEEP_COLUMNS)


@sweeps.command("get")
@click.argument("sweep_id", type=int)
@click.option("--trials", is_flag=True, help="Print the trials as a table instead.")
@pass_context
def sweeps_get(ctx: Context, sweep_id: int, trials: bool) -> None:
    """One sweep: state, best trial, cost, and its trials."""
    sweep = api.call(sweeps_retrieve.sync_detailed, id=sweep_id, client=ctx.client)
    if trials:
        ctx.emit(sweep.to_dict().get("trials") or [], TRIAL_COLUMNS)
    else:
        ctx.emit(sweep)


@sweeps.command("submit")
@SWEEP_FILE
@click.option("--name", help="The sweep's display name (default: the file's, or its name).")
@click.option("--team", help="Team slug; needed when you submit to several teams.")
@click.option("--region", help="Vertex region (default: the file's, or the server's).")
@click.option("--wait", is_flag=True,
              help="Wait for the sweep to end; exit 0 if it succeeded, 1 if not.")
@click.option("--idempotency-key", help="Reuse when retrying: the server creates one sweep "
              "(default: a new key per run).")
@pass_context
def sweeps_submit(ctx: Context, path: Path, name: str | None, team: str | None,
                  region: str | None, wait: bool, idempotency_key: str | None) -> None:
    """Submit a sweep from a file."""
    body = documents.request_body(ctx.client, path, documents.SWEEP, name=name, team=team,
                                  region=region)
    key = idempotency_key or str(uuid.uuid4())
    sweep = api.send(ctx.client, "POST", "/api/v1/sweeps/", body=body,
                     headers={"Idempotency-Key": key}).json()
    click.echo(f"submitted sweep {sweep['id']} ({sweep['name']})", err=True)
    if not wait:
        ctx.emit(sweep, SWEEP_COLUMNS)
        return
    final = waiting.until_ended(
        lambda: api.call(sweeps_retrieve.sync_detailed, id=sweep["id"], client=ctx.client),
        f"sweep {sweep['id']}", TERMINAL)
    ctx.emit(final, SWEEP_COLUMNS)
    if final.get("state") != "SUCCEEDED":
        raise click.exceptions.Exit(api.REFUSED)


@sweeps.command("validate")
@SWEEP_FILE
@click.option("--team", help="Judge it for this team (its policy).")
@pass_context
def sweeps_validate(ctx: Context, path: Path, team: str | None) -> None:
    """Check a sweep without creating it; exit 1 with its field errors if it would be refused."""
    body = documents.request_body(ctx.client, path, documents.SWEEP, team=team)
    verdict = api.send(ctx.client, "POST", "/api/v1/sweeps/validate/", body=body).json()
    ctx.emit(verdict, ("valid", "warnings"))
    if not verdict.get("valid"):
        raise api.Refused(400, verdict.get("errors"))


@sweeps.command("cancel")
@click.argument("sweep_id", type=int)
@pass_context
def sweeps_cancel(ctx: Context, sweep_id: int) -> None:
    """Cancel a sweep and its running trials."""
    ctx.emit(api.call(sweeps_cancel_create.sync_detailed, id=sweep_id, client=ctx.client),
             SWEEP_COLUMNS)


@sweeps.command("clone")
@click.argument("sweep_id", type=int)
@pass_context
def sweeps_clone(ctx: Context, sweep_id: int) -> None:
    """The sweep's request, a file for `vcp sweeps submit -f` (YAML unless -o json)."""
    body = api.plain(api.call(sweeps_clone_retrieve.sync_detailed, id=sweep_id,
                              client=ctx.client))
    documents.emit_document(body, ctx.output)


@sweeps.command("export")
@click.argument("sweep_id", type=int)
@click.option("--fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True,
              help="gcloud hp-tuning-jobs --config YAML or REST JSON.")
@pass_context
def sweeps_export(ctx: Context, sweep_id: int, fmt: str) -> None:
    """A sweep as the HyperparameterTuningJob Vertex takes (printed as the server wrote it)."""
    answer = api.send(ctx.client, "GET", f"/api/v1/sweeps/{sweep_id}/export/",
                      params={"fmt": fmt}).json()
    click.echo(str(answer["text"]).rstrip("\n"))
