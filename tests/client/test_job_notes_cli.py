"""`vcp jobs tag | untag | note` on the generated client, answered by the control plane's own
Django app in the test's process (Django's test client behind an httpx transport: no server,
no network, the test's database transaction): tags are
added, changed and removed one by one, the note set; a refused tag or an unknown key exits 1
naming it and changes nothing; each change is in the team's audit log."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest
from click.testing import CliRunner, Result
from django.test import Client

from controlplane.runs.models import Job
from controlplane.security import tokens
from controlplane.security.models import AuditEntry
from controlplane.teams.models import Role, Team
from tests.people import make_user
from vcp import api
from vcp.main import cli
from vertex_control_plane_client import AuthenticatedClient

Vcp = Callable[..., Result]


@pytest.fixture
def vcp(team: Team, monkeypatch: pytest.MonkeyPatch) -> Vcp:
    """The command line as a member of `team`, with a real API token."""
    member = make_user("ann", team, Role.MEMBER)
    key = tokens.create(member, "cli").key

    def django_answers(request: httpx.Request) -> httpx.Response:
        # The test client, not a WSGI server: it keeps the test's connection open between
        # requests (a WSGI handler closes it when a request finishes).
        answer = Client().generic(
            request.method, request.url.raw_path.decode(), data=request.content,
            content_type=request.headers.get("content-type", ""),
            HTTP_AUTHORIZATION=request.headers.get("authorization", ""))
        return httpx.Response(answer.status_code, headers=dict(answer.headers),
                              content=answer.content)

    def in_process(server: str, token: str) -> AuthenticatedClient:
        return AuthenticatedClient(
            base_url=server, token=token, prefix="Token", raise_on_unexpected_status=False,
            httpx_args={"transport": httpx.MockTransport(django_answers)})

    monkeypatch.setattr(api, "client", in_process)

    def run(*args: str) -> Result:
        return CliRunner().invoke(cli, ["--server", "http://testserver", "--token", key,
                                        "-o", "json", *args])
    return run


@pytest.fixture
def job(team: Team) -> Job:
    owner = make_user("ada", team, Role.ADMIN)
    return Job.objects.create(team=team, created_by=owner, name="lr-1", request={},
                              custom_job={}, project="p", region="us-central1")


def test_tags_are_added_changed_and_removed_and_the_note_set(vcp: Vcp, job: Job) -> None:
    done = vcp("jobs", "tag", str(job.pk), "experiment=lr-sweep", "owner=ann", "baseline")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["tags"] == {"experiment": "lr-sweep", "owner": "ann",
                                               "baseline": ""}
    # Another tag later keeps the others; naming one again changes its value.
    done = vcp("jobs", "tag", str(job.pk), "owner=bob", "seed=3")
    assert done.exit_code == 0, done.output
    done = vcp("jobs", "untag", str(job.pk), "baseline", "experiment")
    assert done.exit_code == 0, done.output
    done = vcp("jobs", "note", str(job.pk), "warmup too short? <b>check</b>")
    assert done.exit_code == 0, done.output
    job.refresh_from_db()
    assert job.tags == {"owner": "bob", "seed": "3"}
    assert job.note == "warmup too short? <b>check</b>"
    assert json.loads(done.stdout)["note"] == job.note

    entries = list(AuditEntry.objects.filter(target_id=str(job.pk)).order_by("id"))
    assert [(e.action, e.actor_name, e.team_id, e.via.split()[0]) for e in entries] == [
        ("job.tag", "ann", job.team_id, "token")] * 4
    assert entries[1].detail == {
        "changed": ["tags"], "tags": {"experiment": "lr-sweep", "owner": "bob",
                                      "baseline": "", "seed": "3"},
        "was": {"experiment": "lr-sweep", "owner": "ann", "baseline": ""}}
    assert entries[3].detail == {"changed": ["note"]}


@pytest.mark.parametrize(("args", "said"), [
    (("tag", "Owner=ann"), "add_tags: 'Owner': a key is 1-63 lowercase letters"),
    (("tag", "owner=<b>"), "add_tags: owner='<b>': a value is up to 63"),
    (("untag", "owner", "nope"), "remove_tags: job {pk} has no tag 'nope' (its tags: owner)"),
    (("note", "x" * 2001), "note: 2,001 characters; a note is at most 2,000"),
])
def test_a_refusal_exits_1_naming_the_field_and_changes_nothing(
        vcp: Vcp, job: Job, args: tuple[str, ...], said: str) -> None:
    Job.objects.filter(pk=job.pk).update(tags={"owner": "ann"}, note="kept")
    verb, *rest = args
    done = vcp("jobs", verb, str(job.pk), *rest)
    assert done.exit_code == 1, done.output
    assert said.format(pk=job.pk) in done.stderr
    job.refresh_from_db()
    assert (job.tags, job.note) == ({"owner": "ann"}, "kept")
    assert not AuditEntry.objects.filter(action="job.tag").exists()


def test_another_team_s_job_is_not_found(vcp: Vcp, other_team: Team) -> None:
    theirs = Job.objects.create(team=other_team, created_by=make_user("oscar", other_team,
                                                                      Role.ADMIN),
                                name="theirs", request={}, custom_job={}, project="p",
                                region="us-central1")
    done = vcp("jobs", "tag", str(theirs.pk), "a=b")
    assert done.exit_code == 1 and "HTTP 404" in done.stderr, done.output
    assert Job.objects.get(pk=theirs.pk).tags == {}


def test_jobs_list_filters_by_tag_and_config(vcp: Vcp, job: Job, team: Team) -> None:
    Job.objects.filter(pk=job.pk).update(tags={"sweep": "a"})
    Job.objects.create(team=team, created_by=job.created_by, name="lr-2", custom_job={},
                       request={"args": ["--lr", "0.01"]}, project="p", region="us-central1")
    listed = vcp("jobs", "list", "--tag", "sweep=a")
    assert [row["name"] for row in json.loads(listed.stdout)] == ["lr-1"], listed.output
    listed = vcp("jobs", "list", "--config", "lr>0.001")
    assert [row["name"] for row in json.loads(listed.stdout)] == ["lr-2"], listed.output
    refused = vcp("jobs", "list", "--config", "lr>>1")
    assert refused.exit_code == 1 and "config: 'lr>>1': > compares numbers" in refused.stderr
