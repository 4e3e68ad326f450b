"""`vcp jobs top`: each replica's CPU, memory and accelerator use, from Cloud Monitoring
(GET /api/v1/jobs/<id>/system/; the local emulator samples its replicas' processes).

\b
    vcp jobs top 42                 the latest sample of each replica
    vcp jobs top 42 --watch         again every 15 s, until Ctrl-C
    vcp -o json jobs top 42         the API's answer, with each replica's history

CPU is a share of the machine's cores (100% = all of them), memory in GB (10^9 bytes) with its
share of the machine's; the accelerator columns appear when a replica has one.
"""

from __future__ import annotations

import json
import time
from typing import Any

import click
import httpx

from vcp import api
from vcp.context import Context, pass_context
from vcp.output import emit, table
from vertex_control_plane_client.api.jobs import jobs_system_retrieve

WATCH_S = 15.0


def fetch(ctx: Context, job_id: int, minutes: int) -> dict[str, Any]:
    """The API's answer as JSON values; Cloud Monitoring's own failure (503) says why."""
    try:
        response = jobs_system_retrieve.sync_detailed(id=job_id, client=ctx.client,
                                                      minutes=minutes)
    except httpx.HTTPError as exc:
        raise api.Unreachable(f"the server could not be reached: {exc}") from exc
    if response.status_code == 503:
        try:
            detail = json.loads(response.content).get("detail", "")
        except (ValueError, AttributeError):
            detail = ""
        raise api.Unreachable(detail or "Cloud Monitoring could not be read (HTTP 503)")
    api.check(response.status_code, response.content)
    return api.plain(response.parsed)


def _percent(value: Any) -> str:
    return "-" if value is None else f"{value:.1f}%"


def _memory(latest: dict[str, Any]) -> str:
    gb, share = latest.get("memory_gb"), latest.get("memory_percent")
    if gb is None:
        return _percent(share)
    return f"{gb:.2f} GB" + (f" ({share:.1f}%)" if share is not None else "")


def rows(body: dict[str, Any]) -> tuple[list[dict[str, str]], tuple[str, ...]]:
    """One row a replica, in words and units; the accelerator columns only where one has
    figures."""
    found, accelerators = [], False
    for replica in body.get("replicas", []):
        latest = replica.get("latest") or {}
        has = latest.get("accelerator_percent") is not None or \
            latest.get("accelerator_memory_percent") is not None
        accelerators = accelerators or has
        at = str(latest.get("at") or "")
        found.append({
            "replica": replica.get("replica", ""),
            "cpu": _percent(latest.get("cpu_percent")),
            "memory": _memory(latest),
            "accelerator": _percent(latest.get("accelerator_percent")),
            "accelerator_memory": _percent(latest.get("accelerator_memory_percent")),
            # The time of day (UTC) of the newest sample: how fresh the figures are.
            "sampled": at[11:19] + " UTC" if len(at) >= 19 else "-",
        })
    columns = ("replica", "cpu", "memory", *(("accelerator", "accelerator_memory")
                                             if accelerators else ()), "sampled")
    return found, columns


def render(body: dict[str, Any]) -> str:
    found, columns = rows(body)
    if not found:
        return f"job {body.get('job')}: {body.get('note') or 'no samples yet'}"
    return table(found, columns)


@click.command("top")
@click.argument("job_id", type=int)
@click.option("--minutes", type=click.IntRange(1, 1440), default=30, show_default=True,
              help="How far back to look for samples.")
@click.option("--watch", is_flag=True, help=f"Show it again every {WATCH_S:g} s until Ctrl-C.")
@pass_context
def top(ctx: Context, job_id: int, minutes: int, watch: bool) -> None:
    """Each replica's latest CPU, memory and accelerator use."""
    while True:
        body = fetch(ctx, job_id, minutes)
        if ctx.output == "table":
            click.echo(render(body))
        else:
            emit(body, ctx.output)
        if not watch:
            return
        time.sleep(WATCH_S)
        click.echo()
