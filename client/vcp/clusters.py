"""`vcp clusters`: persistent resources (Ray on Vertex AI) and the Ray jobs run on them. A
cluster file is the cluster request the API takes (name, pools, ray, network, ...) as YAML or
JSON; a Ray job's entrypoint is given as arguments after `--`, never through a shell."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import click

from vcp import api, documents, waiting
from vcp.context import Context, pass_context
from vertex_control_plane_client.api.clusters import (
    clusters_destroy,
    clusters_ray_jobs_list,
    clusters_ray_jobs_retrieve,
    clusters_ray_jobs_stop_create,
    clusters_retrieve,
)

CLUSTER_COLUMNS = ("id", "name", "team", "region", "state", "ray_version", "hourly_micros",
                   "accrued_micros", "created_at")
RAY_JOB_COLUMNS = ("id", "cluster", "team", "state", "submission_id", "created_at", "ended_at")
RAY_TERMINAL = {"SUCCEEDED", "FAILED", "STOPPED"}


@click.group()
def clusters() -> None:
    """Persistent resources (Ray clusters): list, inspect, create, scale, delete; Ray jobs."""


@clusters.command("list")
@click.option("--all", "everything", is_flag=True, help="Deleted and failed ones too.")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@pass_context
def clusters_list_command(ctx: Context, everything: bool, limit: int) -> None:
    """Your teams' clusters, newest first: live ones unless --all."""
    params: dict[str, Any] = {"limit": limit}
    if everything:
        params["all"] = "1"
    page = api.send(ctx.client, "GET", "/api/v1/clusters/", params=params).json()
    ctx.emit(page["results"], CLUSTER_COLUMNS)


@clusters.command("get")
@click.argument("cluster_id", type=int)
@pass_context
def clusters_get(ctx: Context, cluster_id: int) -> None:
    """One cluster: state, pools, Ray dashboard, price per hour and what it has cost."""
    ctx.emit(api.call(clusters_retrieve.sync_detailed, id=cluster_id, client=ctx.client))


@clusters.command("create")
@click.option("-f", "--file", "path", required=True,
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The cluster request, YAML or JSON.")
@click.option("--team", help="Team slug; needed when you belong to several teams.")
@click.option("--idempotency-key", help="Reuse when retrying: the server creates one cluster.")
@pass_context
def clusters_create(ctx: Context, path: Path, team: str | None,
                    idempotency_key: str | None) -> None:
    """Create a cluster. It bills from now until it is deleted, busy or not."""
    _, document = documents.read(path)
    if not isinstance(document, dict):
        raise click.BadParameter(f"{path}: a cluster is a mapping of fields", param_hint="-f")
    body = dict(document)
    if team:
        body["team"] = team
    cluster = api.send(ctx.client, "POST", "/api/v1/clusters/", body=body,
                       headers={"Idempotency-Key": idempotency_key or str(uuid.uuid4())}).json()
    click.echo(f"creating cluster {cluster['id']} ({cluster['name']}); "
               f"{cluster.get('billing') or 'it bills while it exists'}", err=True)
    ctx.emit(cluster, CLUSTER_COLUMNS)


@clusters.command("scale")
@click.argument("cluster_id", type=int)
@click.argument("replicas", nargs=-1, required=True)
@pass_context
def clusters_scale(ctx: Context, cluster_id: int, replicas: tuple[str, ...]) -> None:
    """New replica counts, as POOL=COUNT (e.g. `vcp clusters scale 3 workers=4`)."""
    counts: dict[str, int] = {}
    for item in replicas:
        pool, sep, count = item.partition("=")
        if not sep or not pool or not (count.isascii() and count.isdigit()):
            raise click.BadParameter(f"{item!r}: give POOL=COUNT", param_hint="REPLICAS")
        counts[pool] = int(count)
    ctx.emit(api.send(ctx.client, "PATCH", f"/api/v1/clusters/{cluster_id}/",
                      body={"replicas": counts}).json(), CLUSTER_COLUMNS)


@clusters.command("delete")
@click.argument("cluster_id", type=int)
@pass_context
def clusters_delete(ctx: Context, cluster_id: int) -> None:
    """Delete a cluster: its Ray jobs end and its cost stops once Vertex has removed it."""
    ctx.emit(api.call(clusters_destroy.sync_detailed, id=cluster_id, client=ctx.client),
             CLUSTER_COLUMNS)


# --- Ray jobs --------------------------------------------------------------------------------

@clusters.group("ray-jobs")
def ray_jobs() -> None:
    """Ray jobs submitted to your clusters through Ray's Job Submission API."""


@ray_jobs.command("list")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@pass_context
def ray_jobs_list(ctx: Context, limit: int) -> None:
    page = api.call(clusters_ray_jobs_list.sync_detailed, client=ctx.client, limit=limit)
    ctx.emit(page.results, RAY_JOB_COLUMNS)


@ray_jobs.command("get")
@click.argument("ray_job_id", type=int)
@pass_context
def ray_jobs_get(ctx: Context, ray_job_id: int) -> None:
    """One Ray job: state, entrypoint, and the steps and checkpoints its trainer reported."""
    ctx.emit(api.call(clusters_ray_jobs_retrieve.sync_detailed, id=ray_job_id,
                      client=ctx.client))


@ray_jobs.command("submit", context_settings={"ignore_unknown_options": True})
@click.option("--cluster", "cluster_id", type=int, required=True, help="The cluster's id.")
@click.option("--env", "env", multiple=True, help="NAME=VALUE for the job's environment.")
@click.option("--num-cpus", type=click.FloatRange(0, 64), help="CPUs for the driver.")
@click.option("--wait", is_flag=True, help="Wait for the end; exit 0 if it succeeded, 1 if not.")
@click.argument("entrypoint", nargs=-1, required=True, type=click.UNPROCESSED)
@pass_context
def ray_jobs_submit(ctx: Context, cluster_id: int, env: tuple[str, ...],
                    num_cpus: float | None, wait: bool, entrypoint: tuple[str, ...]) -> None:
    """Run ENTRYPOINT (after `--`) on a cluster: `vcp clusters ray-jobs submit --cluster 3 --
    python -m trainers.ray_train --workers 2`."""
    env_vars: dict[str, str] = {}
    for item in env:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise click.BadParameter(f"{item!r}: give NAME=VALUE", param_hint="--env")
        env_vars[name] = value
    body: dict[str, Any] = {"cluster": cluster_id, "entrypoint": list(entrypoint)}
    if env_vars:
        body["env_vars"] = env_vars
    if num_cpus is not None:
        body["entrypoint_num_cpus"] = num_cpus
    job = api.send(ctx.client, "POST", "/api/v1/clusters/ray-jobs/", body=body,
                   headers={"Idempotency-Key": str(uuid.uuid4())}).json()
    click.echo(f"submitted Ray job {job['id']} to cluster {cluster_id}", err=True)
    if wait:
        job = waiting.until_ended(
            lambda: api.call(clusters_ray_jobs_retrieve.sync_detailed, id=job["id"],
                             client=ctx.client), f"Ray job {job['id']}", RAY_TERMINAL)
    ctx.emit(job, RAY_JOB_COLUMNS)
    if wait and job.get("state") != "SUCCEEDED":
        raise click.exceptions.Exit(api.REFUSED)


@ray_jobs.command("logs")
@click.argument("ray_job_id", type=int)
@click.option("--severity", help="This level and above: DEBUG, INFO, WARNING, ERROR...")
@click.option("-q", "--query", "query", help="Only lines containing this text (any case).")
@pass_context
def ray_jobs_logs(ctx: Context, ray_job_id: int, severity: str | None,
                  query: str | None) -> None:
    """The Ray job's output, or the lines matching --severity and -q."""
    params = {k: v for k, v in (("severity", severity), ("q", query)) if v}
    answer = api.send(ctx.client, "GET", f"/api/v1/clusters/ray-jobs/{ray_job_id}/logs/",
                      params=params or None).json()
    if ctx.output == "table":
        click.echo(str(answer.get("logs") or "").rstrip("\n"))
    else:
        ctx.emit(answer)


@ray_jobs.command("stop")
@click.argument("ray_job_id", type=int)
@pass_context
def ray_jobs_stop(ctx: Context, ray_job_id: int) -> None:
    ctx.emit(api.call(clusters_ray_jobs_stop_create.sync_detailed, id=ray_job_id,
                      client=ctx.client), RAY_JOB_COLUMNS)
