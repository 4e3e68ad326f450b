"""`vcp jobs tag | untag | note`: a team's own words on a job, through PATCH /api/v1/jobs/<id>/.

\b
    vcp jobs tag 42 experiment=lr-sweep owner=ann baseline
    vcp jobs untag 42 owner
    vcp jobs note 42 "warmup too short?"

The server keeps a job's whole tag set and checks every key and value (lowercase letters,
digits, '_' and '-'); these commands read the job's tags, change the ones named and send the
whole set back, so the server's refusal (exit 1, naming the tag) changes nothing.
"""

from __future__ import annotations

import click

from vcp import api
from vcp.context import Context, pass_context
from vertex_control_plane_client.api.jobs import jobs_partial_update, jobs_retrieve
from vertex_control_plane_client.models import (
    PatchedJobNotesRequest,
    PatchedJobNotesRequestTags,
)

NOTE_COLUMNS = ("id", "name", "tags", "note")


def _tags_of(ctx: Context, job_id: int) -> dict[str, str]:
    job = api.call(jobs_retrieve.sync_detailed, id=job_id, client=ctx.client)
    return dict(job.tags or {})


def _send(ctx: Context, job_id: int, request: PatchedJobNotesRequest) -> None:
    ctx.emit(api.call(jobs_partial_update.sync_detailed, id=job_id, client=ctx.client,
                      body=request), NOTE_COLUMNS)


@click.command("tag")
@click.argument("job_id", type=int)
@click.argument("pairs", nargs=-1, required=True, metavar="KEY=VALUE...")
@pass_context
def tag(ctx: Context, job_id: int, pairs: tuple[str, ...]) -> None:
    """Add or change tags (KEY=VALUE, or KEY alone for an empty value); others stay."""
    tags = _tags_of(ctx, job_id)
    for pair in pairs:
        key, _, value = pair.partition("=")
        tags[key.strip()] = value.strip()
    _send(ctx, job_id, PatchedJobNotesRequest(tags=PatchedJobNotesRequestTags.from_dict(tags)))


@click.command("untag")
@click.argument("job_id", type=int)
@click.argument("keys", nargs=-1, required=True, metavar="KEY...")
@pass_context
def untag(ctx: Context, job_id: int, keys: tuple[str, ...]) -> None:
    """Remove tags by key; a key the job does not carry is refused and nothing changes."""
    tags = _tags_of(ctx, job_id)
    missing = [key for key in keys if key not in tags]
    if missing:
        # A typo would otherwise remove nothing and say nothing.
        raise api.Refused(404, {"tags": [f"job {job_id} has no tag {key!r} (its tags: "
                                         f"{', '.join(sorted(tags)) or 'none'})"
                                         for key in missing]})
    for key in keys:
        del tags[key]
    _send(ctx, job_id, PatchedJobNotesRequest(tags=PatchedJobNotesRequestTags.from_dict(tags)))


@click.command("note")
@click.argument("job_id", type=int)
@click.argument("text")
@pass_context
def note(ctx: Context, job_id: int, text: str) -> None:
    """Replace the job's note ("" clears it; at most 2,000 characters)."""
    _send(ctx, job_id, PatchedJobNotesRequest(note=text))
