"""`vcp queue`: the queue in front of Vertex as your teams see it (GET /api/v1/queue/).

\b
    vcp queue                  jobs waiting here in place order, with why; then those running
    vcp queue --team vision    one team's
    vcp -o json queue          for scripts

A job waits here (QUEUED_LOCAL) until its team's share of the project's accelerators allows
it; `borrowing` marks a running job beyond its team's guarantee, which may be stopped at its
next checkpoint for another team's guarantee and requeued to resume.
"""

from __future__ import annotations

import click

from vcp import api
from vcp.context import Context, pass_context
from vertex_control_plane_client.api.queue import queue_list
from vertex_control_plane_client.types import UNSET

QUEUE_COLUMNS = ("place", "id", "team", "name", "state", "priority", "accelerators",
                 "borrowing", "reason", "earliest_start")


@click.command("queue")
@click.option("--team", help="Team slug.")
@pass_context
def queue(ctx: Context, team: str | None) -> None:
    """Your teams' jobs waiting for their share (in place order, with why) and running."""
    ctx.emit(api.call(queue_list.sync_detailed, client=ctx.client, team=team or UNSET),
             QUEUE_COLUMNS)
