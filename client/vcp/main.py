"""vcp: compose, submit and follow Vertex AI training jobs on a Vertex Control Plane.

\b
    vcp login --server https://cp.example.com        (asks for a token made at /tokens/)
    vcp jobs submit -f job.yaml --wait               (gcloud --config YAML or a job request)
    vcp logs 42 -f
    vcp -o json jobs list --state RUNNING
    vcp sweeps submit -f study.yaml --wait           (gcloud hp-tuning-jobs YAML or a sweep)
    vcp clusters ray-jobs submit --cluster 3 -- python -m trainers.ray_train
    vcp queue                                        (who waits for their team's share, why)

\b
Exit codes: 0 done; 1 refused (field errors on stderr) or a --wait job that did not succeed;
2 usage; 3 the server unreachable or failing. Completion: `vcp completion bash|zsh|fish`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import click
import httpx
from click.shell_completion import get_completion_class

from vcp import (
    api,
    clusters,
    documents,
    job_groups,
    models_cli,
    notes,
    queue,
    settings,
    stream,
    sweeps,
    top,
    waiting,
)
from vcp.context import Context, pass_context
from vcp.output import FORMATS, cell, emit, ending
from vertex_control_plane_client.api.jobs import (
    jobs_cancel_create,
    jobs_events_list,
    jobs_list,
    jobs_logs_list,
    jobs_resubmit_create,
    jobs_retrieve,
)
from vertex_control_plane_client.api.presets import presets_list
from vertex_control_plane_client.api.serving import (
    serving_endpoints_list,
    serving_endpoints_retrieve,
)
from vertex_control_plane_client.api.teams import teams_list
from vertex_control_plane_client.models import JobsListState, ResubmitRequest
from vertex_control_plane_client.types import UNSET

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
JOB_COLUMNS = ("id", "name", "team", "state", "attempt", "restarts", "last_step", "total_steps",
               "duration", "cost_micros", "cost", "created_at")

# Cloud Logging (and so the follower) may store a job's last lines a few seconds after the job
# has ended: `logs -f` keeps reading this long once it sees the end.
LOG_GRACE_S = 8.0


@click.group(help=__doc__)
@click.option("--server", envvar="VCP_SERVER", help="Base URL of the control plane.")
@click.option("--token", envvar="VCP_TOKEN", help="An API token (default: the stored one).")
@click.option("-o", "--output", type=click.Choice(FORMATS), default="table", show_default=True)
@click.version_option(package_name="vertex-control-plane-client", prog_name="vcp",
                      message="%(prog)s %(version)s")
@click.pass_context
def cli(ctx: click.Context, server: str | None, token: str | None, output: str) -> None:
    ctx.obj = Context(server, token, output)


@cli.command()
@click.option("--server", "login_server", help="Base URL of the control plane.")
@click.option("--token-stdin", is_flag=True, help="Read the token from standard input.")
@pass_context
def login(ctx: Context, login_server: str | None, token_stdin: bool) -> None:
    """Check a token with the server and store it (mode 0600) in the user's config directory."""
    server = (login_server or ctx.server or settings.load().get("server")
              or settings.DEFAULT_SERVER).rstrip("/")
    if ctx.token:
        token = ctx.token
    elif token_stdin or not _interactive():
        # Piped in, or no terminal to hide it on: read as given, instead of a hidden prompt
        # that falls back to echoing with "Password input may be echoed".
        token = sys.stdin.readline().strip()
    else:
        token = click.prompt("API token (make one at /tokens/)", hide_input=True).strip()
    if not token:
        raise click.UsageError("an empty token")
    teams = api.call(teams_list.sync_detailed, client=api.client(server, token)).results
    path = settings.save(server, token)
    names = ", ".join(f"{t.slug} ({t.role})" for t in teams) or "none yet"
    click.echo(f"logged in to {server}; teams: {names}; token stored in {path}", err=True)


def _interactive() -> bool:
    """A hidden prompt is possible: standard input is a terminal, and one can be opened to
    turn its echo off (getpass opens /dev/tty)."""
    if not sys.stdin.isatty():
        return False
    if os.name != "posix":  # Windows' getpass reads the console without /dev/tty
        return True
    try:
        os.close(os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY))
    except OSError:
        return False
    return True


# --- jobs ------------------------------------------------------------------------------------

@cli.group()
def jobs() -> None:
    """List, inspect, submit, validate, price, cancel, resubmit, export and tag jobs."""


@jobs.command("list")
@click.option("--state", type=click.Choice([s.value for s in JobsListState]))
@click.option("--team", help="Team slug.")
@click.option("--user", help="Username of who submitted.")
@click.option("--tag", help="A tag the job carries: KEY or KEY=VALUE.")
@click.option("--config", "config_filter",
              help="A configuration value: KEY OP VALUE, e.g. 'lr<=0.001'.")
@click.option("--group-by", help="One line a group of jobs (after the filters): tag:KEY, "
              "config:KEY (e.g. config:lr) or sweep.")
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0)
@pass_context
def jobs_list_command(ctx: Context, state: str | None, team: str | None, user: str | None,
                      tag: str | None, config_filter: str | None, group_by: str | None,
                      limit: int, offset: int) -> None:
    """The jobs of your teams, newest first; or their groups (--group-by), largest first."""
    if group_by:
        job_groups.show(ctx, group_by, state=state, team=team, user=user, tag=tag,
                        config_filter=config_filter)
        return
    page = api.call(jobs_list.sync_detailed, client=ctx.client,
                    state=JobsListState(state) if state else UNSET, team=team or UNSET,
                    user=user or UNSET, tag=tag or UNSET, config=config_filter or UNSET,
                    limit=limit, offset=offset)
    ctx.emit(page.results, JOB_COLUMNS)


@jobs.command("get")
@click.argument("job_id", type=int)
@pass_context
def jobs_get(ctx: Context, job_id: int) -> None:
    """One job: state, attempts, steps, cost, request and CustomJob."""
    ctx.emit(api.call(jobs_retrieve.sync_detailed, id=job_id, client=ctx.client))


JOB_FILE = click.option("-f", "--file", "path", required=True,
                        type=click.Path(exists=True, dir_okay=False, path_type=Path),
                        help="gcloud --config YAML, a CustomJob in REST JSON, or a job request.")


@jobs.command("submit")
@JOB_FILE
@click.option("--name", help="The job's name (default: the file's, or its file name).")
@click.option("--team", help="Team slug; needed when you submit to several teams.")
@click.option("--region", help="Vertex region (default: the file's, or the server's).")
@click.option("--wait", is_flag=True,
              help="Wait for the job to end; exit 0 if it succeeded, 1 if not.")
@click.option("--idempotency-key", help="Reuse when retrying: the server creates one job "
              "(default: a new key per run).")
@pass_context
def jobs_submit(ctx: Context, path: Path, name: str | None, team: str | None,
                region: str | None, wait: bool, idempotency_key: str | None) -> None:
    """Submit a job from a file."""
    body = documents.job_body(ctx.client, path, name=name, team=team, region=region)
    key = idempotency_key or str(uuid.uuid4())
    job = api.send(ctx.client, "POST", "/api/v1/jobs/", body=body,
                   headers={"Idempotency-Key": key}).json()
    click.echo(f"submitted job {job['id']} ({job['name']})", err=True)
    if not wait:
        ctx.emit(job, JOB_COLUMNS)
        return
    final = waiting.until_ended(
        lambda: api.call(jobs_retrieve.sync_detailed, id=job["id"], client=ctx.client),
        f"job {job['id']}", TERMINAL)
    ctx.emit(final, JOB_COLUMNS)
    click.echo(ending(f"job {job['id']}", final), err=True)
    if final["state"] != "SUCCEEDED":
        raise click.exceptions.Exit(api.REFUSED)


@jobs.command("validate")
@JOB_FILE
@click.option("--team", help="Judge it for this team (quota, budget, memory policy).")
@pass_context
def jobs_validate(ctx: Context, path: Path, team: str | None) -> None:
    """Check a job without creating it; exit 1 with its field errors if it would be refused."""
    body = documents.job_body(ctx.client, path, team=team)
    verdict = api.send(ctx.client, "POST", "/api/v1/jobs/validate/", body=body).json()
    ctx.emit(verdict, ("valid", "world_size", "warnings", "hints", "estimate"))
    if not verdict.get("valid"):
        raise api.Refused(400, verdict.get("errors"))


@jobs.command("estimate")
@JOB_FILE
@click.option("--hours", type=click.FloatRange(0, min_open=True),
              help="How long it runs (default: until its timeout).")
@pass_context
def jobs_estimate(ctx: Context, path: Path, hours: float | None) -> None:
    """What a job would cost (integer micro-dollars), on demand, spot and flex."""
    body = documents.job_body(ctx.client, path)
    if hours is not None:
        body["hours"] = hours
    ctx.emit(api.send(ctx.client, "POST", "/api/v1/jobs/estimate/", body=body).json())


@jobs.command("cancel")
@click.argument("job_id", type=int)
@pass_context
def jobs_cancel(ctx: Context, job_id: int) -> None:
    """Cancel a job (it goes CANCELLING, then CANCELLED)."""
    ctx.emit(api.call(jobs_cancel_create.sync_detailed, id=job_id, client=ctx.client),
             JOB_COLUMNS)


@jobs.command("resubmit")
@click.argument("job_id", type=int)
@click.option("--step", type=click.IntRange(0), help="Checkpoint step (default: the newest).")
@click.option("--name", help="The new job's name.")
@pass_context
def jobs_resubmit(ctx: Context, job_id: int, step: int | None, name: str | None) -> None:
    """A new job that resumes from one of this job's checkpoints."""
    body = ResubmitRequest(checkpoint_step=UNSET if step is None else step,
                           name=name or UNSET)
    ctx.emit(api.call(jobs_resubmit_create.sync_detailed, id=job_id, client=ctx.client,
                      body=body, idempotency_key=str(uuid.uuid4())), JOB_COLUMNS)


@jobs.command("export")
@click.argument("job_id", type=int)
@click.option("--fmt", type=click.Choice(["yaml", "json", "python"]), default="yaml",
              show_default=True, help="gcloud --config YAML, REST JSON or a Python script.")
@pass_context
def jobs_export(ctx: Context, job_id: int, fmt: str) -> None:
    """A submitted job as gcloud YAML, REST JSON or Python (printed as the server wrote it)."""
    # The answer is a document in the format asked for, not JSON: printed as it came.
    response = api.send(ctx.client, "GET", f"/api/v1/jobs/{job_id}/export/",
                        params={"fmt": fmt})
    click.echo(response.text.rstrip("\n"))


# --- a job's logs and events -----------------------------------------------------------------

@cli.command()
@click.argument("job_id", type=int)
@click.option("-f", "--follow", is_flag=True, help="Keep printing lines until the job ends.")
@click.option("--severity", help="This level and above: DEBUG, INFO, WARNING, ERROR...")
@pass_context
def logs(ctx: Context, job_id: int, follow: bool, severity: str | None) -> None:
    """A job's log lines, oldest first; -f follows them live and stops when the job ends."""
    after: str | None = None
    ended_at: float | None = None

    # insertIds of the lines printed since the last stored one read: a pushed line is not
    # printed again when the stored lines are read.
    shown: set[str] = set()

    def stored() -> None:
        """Print the lines stored after the last stored one printed."""
        nonlocal after
        while True:
            page = api.call(jobs_logs_list.sync_detailed, id=job_id, client=ctx.client,
                            after=after or UNSET, severity=severity or UNSET, limit=1000)
            for line in page.results:
                if line.insert_id not in shown:
                    print_line(ctx, line)
                    shown.add(line.insert_id)
                after = f"{line.timestamp.isoformat()},{line.insert_id}"
            if not (page.results and page.next_):
                return

    stored()
    if not follow:
        return
    # Pushed as they are stored; the stream ends a little after the job does. Without one
    # (or when it breaks), the stored lines are polled.
    with contextlib.suppress(httpx.HTTPError):
        if stream.follow(ctx.client, job_id, stored, lambda line: print_line(ctx, line),
                         severity, shown):
            stored()  # anything stored as the stream closed
            return
    while True:
        stored()
        if ended_at is None:
            job = api.call(jobs_retrieve.sync_detailed, id=job_id, client=ctx.client)
            if str(job.state) in TERMINAL:
                ended_at = time.monotonic()
        elif time.monotonic() - ended_at > LOG_GRACE_S:
            return
        time.sleep(waiting.POLL_S / 2)


def print_line(ctx: Context, line: Any) -> None:
    """A stored line (the API's LogLine) or a pushed one (a dict of the same fields)."""
    row = line if isinstance(line, dict) else line.to_dict()
    if ctx.output == "table":
        click.echo(f"{row['timestamp']} {row['replica'] or '-'} "
                   f"{cell(row['severity'], 'severity')} {row['message']}")
    else:
        emit(row, "json" if ctx.output == "json" else "yaml")


@cli.command()
@click.argument("job_id", type=int)
@click.option("--limit", type=click.IntRange(1, 1000), default=200, show_default=True)
@pass_context
def events(ctx: Context, job_id: int, limit: int) -> None:
    """A job's events: steps, checkpoints, preemptions, resumes, errors."""
    page = api.call(jobs_events_list.sync_detailed, id=job_id, client=ctx.client, limit=limit)
    ctx.emit(page.results, ("timestamp", "kind", "attempt", "replica", "step"))


@cli.group(invoke_without_command=True)
@click.pass_context
def presets(click_ctx: click.Context) -> None:
    """The job presets the composer ships (each a body for `jobs submit`); `presets run SLUG`
    submits one."""
    if click_ctx.invoked_subcommand is None:
        ctx = click_ctx.find_object(Context)
        ctx.emit(api.call(presets_list.sync_detailed, client=ctx.client),
                 ("slug", "title", "needs"))


@presets.command("run")
@click.argument("slug")
@click.option("--scale-down", is_flag=True, help="Its local variant: the same strategy, degrees "
              "and architecture at a CPU size, which the local emulator can run.")
@click.option("--team", help="Team slug; needed when you submit to several teams.")
@pass_context
def presets_run(ctx: Context, slug: str, scale_down: bool, team: str | None) -> None:
    """Submit a preset as a job (its local variant with --scale-down)."""
    listed = api.call(presets_list.sync_detailed, client=ctx.client)
    found = {p.slug: p for p in listed}
    if slug not in found:
        raise click.UsageError(f"no preset {slug!r}; presets: {', '.join(found)}")
    preset = found[slug]
    body = (preset.scaled_down if scale_down else preset.request).to_dict()
    if team:
        body["team"] = team
    job = api.send(ctx.client, "POST", "/api/v1/jobs/", body=body,
                   headers={"Idempotency-Key": str(uuid.uuid4())}).json()
    click.echo(f"submitted job {job['id']} ({job['name']})", err=True)
    ctx.emit(job, JOB_COLUMNS)


# --- serving ---------------------------------------------------------------------------------

@cli.group()
def endpoints() -> None:
    """Serving endpoints of your teams."""


@endpoints.command("list")
@pass_context
def endpoints_list(ctx: Context) -> None:
    page = api.call(serving_endpoints_list.sync_detailed, client=ctx.client, limit=1000)
    ctx.emit(page.results, ("id", "name", "team", "state", "region", "created_at"))


@endpoints.command("get")
@click.argument("endpoint_id", type=int)
@pass_context
def endpoints_get(ctx: Context, endpoint_id: int) -> None:
    ctx.emit(api.call(serving_endpoints_retrieve.sync_detailed, id=endpoint_id,
                      client=ctx.client))


# --- shell completion ------------------------------------------------------------------------

@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the completion script: eval "$(vcp completion bash)" in ~/.bashrc."""
    completer = get_completion_class(shell)
    assert completer is not None  # the choice lists only shells click supports
    click.echo(completer(cli, {}, "vcp", "_VCP_COMPLETE").source())


jobs.add_command(notes.tag)
jobs.add_command(notes.untag)
jobs.add_command(notes.note)
jobs.add_command(top.top)
cli.add_command(sweeps.sweeps)
cli.add_command(queue.queue)
cli.add_command(models_cli.models)
cli.add_command(clusters.clusters)


def main() -> None:
    cli(prog_name="vcp")


if __name__ == "__main__":
    main()
