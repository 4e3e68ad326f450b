"""`vcp jobs tag | untag | note`: a team's own words on a job, through PATCH /api/v1/jobs/<id>/.

\b
    vcp jobs tag 42 experiment=lr-sweep owner=ann baseline
    vcp jobs untag 42 owner
    vcp jobs note 42 "warmup too short?"

The server keeps a job's whole tag set and checks every key and value (lowercase letters,
digits, '_' and '-'). `tag` and `untag` send only the tags they name (add_tags, remove_tags),
which the server applies with the job's row locked: two people tagging one job at once both
keep their tags. A refusal (exit 1, naming the tag) changes nothing.
"""

from __future__ import annotations

import click

from vcp import api
from vcp.context import Context, pass_context
from vertex_control_plane_client.api.jobs import jobs_partial_update
from vertex_control_plane_client.models import (
    PatchedJobNotesRequest,
    PatchedJobNotesRequestAddTags,
)

NOTE_COLUMNS = ("id", "name", "tags", "note")


def _send(ctx: Context, job_id: int, request: PatchedJobNotesRequest) -> None:
    ctx.emit(api.call(jobs_partial_update.sync_detailed, id=job_id, client=ctx.client,
                      body=request), NOTE_COLUMNS)


@click.command("tag")
@click.argument("job_id", type=int)
@click.argument("pairs", nargs=-1, required=True, metavar="KEY=VALUE...")
@pass_context
def tag(ctx: Context, job_id: int, pairs: tuple[str, ...]) -> None:
    """Add or change tags (KEY=VALUE, or KEY alone for an empty value); others stay."""
    tags: dict[str, str] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        tags[key.strip()] = value.strip()
    _send(ctx, job_id,
          PatchedJobNotesRequest(add_tags=PatchedJobNotesRequestAddTags.from_dict(tags)))


@click.command("untag")
@click.argument("job_id", type=int)
@click.argument("keys", nargs=-1, required=True, metavar="KEY...")
@pass_context
def untag(ctx: Context, job_id: int, keys: tuple[str, ...]) -> None:
    """Remove tags by key; a key the job does not carry is refused and nothing changes."""
    _send(ctx, job_id, PatchedJobNotesRequest(remove_tags=list(keys)))


@click.command("note")
@click.argument("job_id", type=int)
@click.argument("text")
@pass_context
def note(ctx: Context, job_id: int, text: str) -> None:
    """Replace the job's note ("" clears it; at most 2,000 characters)."""
    _send(ctx, job_id, PatchedJobNotesRequest(note=text))
