"""`vcp jobs list --group-by tag:KEY | config:KEY | sweep`: the job list as groups, one line a
group (GET /api/v1/jobs/groups/, after the list's filters): its jobs by state, best and mean
loss, cost in dollars, running time and GPU-hours (accelerator-hours: TPU chips count as GPUs
do). JSON and YAML print the API's answer as it is."""

from __future__ import annotations

from typing import Any

import click

from vcp import api
from vcp.context import Context
from vcp.output import duration
from vertex_control_plane_client.api.jobs import jobs_groups_retrieve
from vertex_control_plane_client.models import JobsGroupsRetrieveState
from vertex_control_plane_client.types import UNSET

COLUMNS = ("group", "jobs", "states", "best_loss", "mean_loss", "cost_micros", "running",
           "gpu_hours", "compare")
NO_VALUE = "(no value)"


def show(ctx: Context, group_by: str, *, state: str | None, team: str | None,
         user: str | None, tag: str | None, config_filter: str | None) -> None:
    answer = api.plain(api.call(
        jobs_groups_retrieve.sync_detailed, client=ctx.client, group_by=group_by,
        state=JobsGroupsRetrieveState(state) if state else UNSET, team=team or UNSET,
        user=user or UNSET, tag=tag or UNSET, config=config_filter or UNSET))
    if ctx.output != "table":
        ctx.emit(answer)
        return
    ctx.emit([row(group) for group in answer["groups"]], COLUMNS)
    if answer["more"]:
        click.echo(f"only the {answer['limit']} largest groups: filter the list to see the "
                   "others", err=True)


def row(group: dict[str, Any]) -> dict[str, Any]:
    """A group as its table line reads (money stays in *_micros: the table writes dollars)."""
    return {
        "group": NO_VALUE if group["value"] is None else group["value"],
        "jobs": group["jobs"],
        "states": ", ".join(f"{n} {state}" for state, n in group["states"].items()) or "-",
        "best_loss": _loss(group["best_loss"]),
        "mean_loss": _loss(group["mean_loss"]),
        "cost_micros": group["cost_micros"],
        "running": duration(group["running_seconds"]) if group["running_seconds"] else "-",
        "gpu_hours": _hours(group["accelerator_hours"]),
        "compare": group["compare_url"],
    }


def _loss(value: float | None) -> str | None:
    return None if value is None else f"{value:.4f}"


def _hours(hours: float) -> str:
    """As the jobs page writes them: one decimal, three under a tenth, '-' for none."""
    if hours <= 0:
        return "-"
    return f"{hours:,.1f}" if hours >= 0.1 else f"{hours:.3f}"
