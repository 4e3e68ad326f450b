"""The request-level doors a hostile second team found (issue 40, doors 6-13): each test
reproduces one against the API or the pages as that team would, and asserts the refusal."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from tests.security.conftest import World
from vertexplan.interop import ImportFailed, import_text


def import_bomb(levels: int) -> str:
    """A Python file of nested list names, each level 16 references to the one before: a few
    hundred bytes that expand to 16**levels values."""
    lines = ["l0 = [0]\n"]
    lines += [f"l{i} = [{', '.join([f'l{i - 1}'] * 16)}]\n" for i in range(1, levels + 1)]
    lines.append(f"job = {{'workerPoolSpecs': [{{'replicaCount': 1, 'x': l{levels}}}]}}\n")
    return "".join(lines)


@pytest.mark.parametrize("levels", [4, 6])
def test_an_import_bomb_is_refused_before_it_expands(levels: int) -> None:
    with pytest.raises(ImportFailed, match="expand to more than"):
        import_text(import_bomb(levels), region="us-central1")


def test_a_set_literal_counts_its_items() -> None:
    # A set is read whole by ast.literal_eval: its 1,000 items count, not one value.
    items = ", ".join(str(i) for i in range(1000))
    text = (f"s = {{{items}}}\nl1 = [{', '.join(['s'] * 16)}]\n"
            "job = {'workerPoolSpecs': [{'replicaCount': 1, 'x': l1}]}\n")
    with pytest.raises(ImportFailed, match="expand to more than"):
        import_text(text, region="us-central1")


def test_a_long_string_counts_by_its_length() -> None:
    # 10 KB named 256 times would be a 2.5 MB document from a 10 KB file.
    text = (f"s = '{'x' * 10_000}'\nl1 = [{', '.join(['s'] * 16)}]\n"
            f"l2 = [{', '.join(['l1'] * 16)}]\n"
            "job = {'workerPoolSpecs': [{'replicaCount': 1, 'x': l2}]}\n")
    with pytest.raises(ImportFailed, match="expand to more than"):
        import_text(text, region="us-central1")


def test_an_import_bomb_is_a_400_even_for_a_viewer(
        world: World, token_client: Callable[[Any], APIClient]) -> None:
    answer = token_client(world.users["viewer"]).post(
        "/api/v1/jobs/import/", {"text": import_bomb(6)}, format="json")
    assert answer.status_code == 400, answer.content[:300]
    assert "expand to more than" in json.dumps(answer.json())


# --- door 12: input that was a 500 --------------------------------------------------------

SUPERSCRIPT_TWO = "\u00b2"  # "²": str.isdigit() says yes, int() says no


def test_a_long_json_key_with_an_infinite_number_is_refused() -> None:
    # PyYAML refuses keys over 1024 characters, so the text fell back to json.loads.
    text = json.dumps({"workerPoolSpecs": [{"replicaCount": 1}], "k" * 1025: 0})
    with pytest.raises(ImportFailed, match="1e400"):
        import_text(text.replace(": 0}", ": 1e400}"), region="us-central1")


@pytest.mark.parametrize("path, body, field", [
    ("/api/v1/jobs/estimate/", {"name": "t", "chief": {"machine_type": "n1-standard-4"},
                                "region": "us-central1", "steps": SUPERSCRIPT_TWO,
                                "step_time_s": 1}, "steps"),
    ("/api/v1/jobs/", {"team": "vision", "displayName": "j",
                       "jobSpec": {"workerPoolSpecs": 3}}, "jobSpec.workerPoolSpecs"),
])
def test_malformed_numbers_and_pools_are_400s_naming_the_field(
        world: World, token_client: Callable[[Any], APIClient], path: str,
        body: dict[str, Any], field: str) -> None:
    answer = token_client(world.users["member"]).post(path, body, format="json")
    assert answer.status_code == 400, answer.content[:300]
    assert field in answer.json()


@pytest.mark.parametrize("path, body, field", [
    ("/api/v1/jobs/import/", {"vertex": {"spec": {"worker_pool_specs": 5}, "run": {}}},
     "jobSpec.workerPoolSpecs"),
    ("/api/v1/sweeps/import/", {"text": json.dumps({
        "studySpec": {"metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
                      "parameters": []},
        "trialJobSpec": {"workerPoolSpecs": 3}})}, "trialJobSpec.workerPoolSpecs"),
])
def test_pools_that_are_not_a_list_are_import_errors_on_their_path(
        world: World, token_client: Callable[[Any], APIClient], path: str,
        body: dict[str, Any], field: str) -> None:
    # An import answers what it read, with the document's errors keyed by their paths.
    answer = token_client(world.users["member"]).post(path, body, format="json")
    assert answer.status_code == 200, answer.content[:300]
    assert "a list of worker pool specs" in " ".join(answer.json()["errors"][field])


def test_a_clusters_superscript_replica_count_is_a_field_error() -> None:
    from vertexplan.clusters.compose import parse_request

    _, errors = parse_request({"name": "c", "pools": [
        {"id": "head", "machine_type": "n1-standard-4", "replica_count": SUPERSCRIPT_TWO}]})
    assert [e.path for e in errors] == ["pools[0].replica_count"]


def test_superscript_ids_in_pages_are_not_server_errors(
        world: World, make_job: Callable[..., Any]) -> None:
    from django.test import Client

    job = make_job(world.team, world.users["member"])
    page = Client(raise_request_exception=False)
    page.force_login(world.users["member"])
    compare = page.get(f"/jobs/compare/?ids={job.pk},{SUPERSCRIPT_TWO}")
    assert compare.status_code == 200
    assert SUPERSCRIPT_TWO in compare.content.decode()  # named as left out
    assert page.get(f"/sweeps/new/?from={SUPERSCRIPT_TWO}").status_code == 200
    answer = page.post(f"/jobs/{job.pk}/resubmit/", {"checkpoint_step": SUPERSCRIPT_TWO},
                       follow=True)
    assert answer.status_code == 200
    assert "checkpoint_step" in answer.content.decode()


# --- door 13: reading never writes the audit log -----------------------------------------

def test_cloning_a_job_to_read_it_writes_no_audit_entry(
        world: World, make_job: Callable[..., Any],
        token_client: Callable[[Any], APIClient]) -> None:
    from django.test import Client

    from controlplane.security.models import AuditEntry

    job = make_job(world.team, world.users["member"])
    assert token_client(world.users["viewer"]).get(
        f"/api/v1/jobs/{job.pk}/clone/").status_code == 200
    page = Client()
    page.force_login(world.users["member"])  # the compose page is for those who submit
    assert page.get(f"/jobs/new/?clone={job.pk}").status_code == 200
    assert not AuditEntry.objects.exists()


def test_the_audit_log_refuses_an_entry_for_a_read() -> None:
    from django.test import RequestFactory

    from controlplane.security import audit

    with pytest.raises(ValueError, match="GET"):
        audit.record(RequestFactory().get("/api/v1/jobs/1/clone/"), "job.clone")


# --- door 7: one lockout per account, however its name is spelled ------------------------

def test_a_locked_account_stays_locked_under_another_spelling(
        world: World, settings: Any) -> None:
    from django.test import Client

    ann = world.users["member"]
    ann.set_password("right-password")
    ann.is_staff = True
    ann.save()
    settings.CP_LOGIN_MAX_FAILURES = 3
    client = Client()
    for _ in range(3):
        assert client.post("/login/", {"username": "ann", "password": "guess"}).status_code == 200
    # Fullwidth and upper case: Django logs in on the NFKC form, "ann". The admin's login
    # shares the count.
    for door in ("/login/", "/admin/login/"):
        for spelling in ("\uff41\uff4e\uff4e", "ANN", "\uff21nn"):
            locked = client.post(door, {"username": spelling, "password": "right-password"})
            assert locked.status_code == 429, (door, spelling)
            assert "_auth_user_id" not in client.session


# --- door 8: no team claims another team's folders ---------------------------------------

def test_no_team_claims_a_default_prefix_or_one_another_team_left(
        world: World, settings: Any) -> None:
    from controlplane.teams import policy
    from controlplane.teams.models import Team

    root = settings.CP_OUTPUT_URI

    def refused(team: Team, prefix: str) -> bool:
        try:
            policy.update(team, {"output_prefix": prefix})
        except policy.PolicyError as exc:
            assert "output_prefix" in exc.errors
            return True
        return False

    speech, vision = world.other_team, world.team
    # The default folder of a team that does not exist yet (created later as "nlp").
    assert refused(speech, f"{root}/nlp")
    assert refused(speech, f"{root}/nlp/checkpoints")
    # Vision moves to a folder of its own: its default folder stays its own.
    assert not refused(vision, "gs://vision-bucket/runs")
    assert refused(speech, f"{root}/vision/exp-1")
    # Vision leaves that folder: it is kept for vision, never handed to speech.
    assert not refused(vision, "")
    assert refused(speech, "gs://vision-bucket/runs/exp-1")
    assert refused(speech, "gs://vision-bucket")
    assert not refused(vision, "gs://vision-bucket/runs")  # vision may return to it
    assert not refused(speech, f"{root}/speech/sub")  # inside its own default: fine
    assert not refused(speech, "gs://speech-bucket/runs")


# --- door 11: the API schema, made once and shown to those signed in ---------------------

def test_the_schema_is_for_signed_in_callers_unless_published(
        world: World, settings: Any, token_client: Callable[[Any], APIClient]) -> None:
    settings.CP_API_SCHEMA_PUBLIC = False
    anonymous = APIClient()
    assert anonymous.get("/api/schema/?format=json").status_code in (401, 403)
    assert anonymous.get("/api/docs/").status_code in (302, 401, 403)
    served = token_client(world.users["viewer"]).get("/api/schema/?format=json")
    assert served.status_code == 200
    assert "/api/v1/jobs/" in served.json()["paths"]
    settings.CP_API_SCHEMA_PUBLIC = True
    assert anonymous.get("/api/schema/?format=json").status_code == 200


def test_the_schema_is_generated_once_per_process(
        world: World, monkeypatch: pytest.MonkeyPatch,
        token_client: Callable[[Any], APIClient]) -> None:
    from drf_spectacular.generators import SchemaGenerator

    from controlplane.core import api_schema

    api_schema.forget()
    made: list[int] = []
    real = SchemaGenerator.get_schema

    def counted(self: SchemaGenerator, *args: Any, **kwargs: Any) -> Any:
        made.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counted)
    api = token_client(world.users["viewer"])
    first = api.get("/api/schema/?format=json").json()
    # Another version or language asked for is the same schema, not another generation.
    again = api.get("/api/schema/?format=json&version=x1&lang=fr").json()
    assert first == again and len(made) == 1


# --- door 10: a user holds a bounded number of event streams -----------------------------

def test_open_event_streams_are_capped_per_user(
        world: World, settings: Any, redis_url: str, make_job: Callable[..., Any]) -> None:
    import asyncio

    import redis
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    settings.CP_LIVE_URL = redis_url
    settings.CP_LIVE_STREAM_S = 1.0
    settings.CP_LIVE_STREAMS_PER_USER = 2
    member, viewer = world.users["member"], world.users["viewer"]
    redis.Redis.from_url(redis_url).delete(f"cp-live-streams:{member.pk}",
                                           f"cp-live-streams:{viewer.pk}")
    job = make_job(world.team, member)
    url = f"/jobs/{job.pk}/events/"

    async def drain(response: Any) -> None:
        async for _ in response.streaming_content:
            pass

    async def scenario() -> None:
        mine, theirs = AsyncClient(), AsyncClient()
        await mine.aforce_login(member)
        await theirs.aforce_login(viewer)
        first, second = await mine.get(url), await mine.get(url)
        assert (first.status_code, second.status_code) == (200, 200)
        refused = await mine.get(url)
        assert refused.status_code == 429
        assert "2 open event streams" in refused.content.decode()
        assert (await theirs.get(url)).status_code == 200  # per user, not per job
        # A stream that ends (after CP_LIVE_STREAM_S) frees its place.
        await asyncio.wait_for(drain(first), 10)
        assert (await mine.get(url)).status_code == 200

    async_to_sync(scenario)()


def test_the_streams_of_one_web_process_share_one_redis_subscription(
        world: World, settings: Any, redis_url: str, make_job: Callable[..., Any],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Door 10's other half: three pages open on a job and one on another hold one pub/sub
    connection between them, with one subscription per job, and each message reaches every
    stream of its job; a job's channel is dropped once its last stream ends."""
    import asyncio

    import redis
    from asgiref.sync import async_to_sync
    from django.test import AsyncClient

    from controlplane.logs import live, live_hub, stream

    monkeypatch.setattr(stream, "ENDED_GRACE_S", 0.0)
    settings.CP_LIVE_URL = redis_url
    settings.CP_LIVE_STREAM_S = 30.0
    settings.CP_LIVE_STREAMS_PER_USER = 10
    member = world.users["member"]
    plain = redis.Redis.from_url(redis_url)
    plain.delete(f"cp-live-streams:{member.pk}")
    first_job, other_job = make_job(world.team, member), make_job(world.team, member)
    first, other = live.channel(first_job.pk), live.channel(other_job.pk)

    async def events_of(response: Any, kinds: list[str], until: str) -> None:
        async for chunk in response.streaming_content:
            text = chunk.decode()
            for line in text.splitlines():
                if line.startswith("event: "):
                    kinds.append(line[len("event: "):])
            if f"event: {until}" in text:
                return

    async def scenario() -> None:
        client = AsyncClient()
        await client.aforce_login(member)
        pages = [await client.get(f"/jobs/{first_job.pk}/events/") for _ in range(3)]
        pages.append(await client.get(f"/jobs/{other_job.pk}/events/"))
        assert [page.status_code for page in pages] == [200] * 4
        seen: list[list[str]] = [[] for _ in pages]
        # Each stream subscribes on its first read: read up to `ready` on all four.
        for page, kinds in zip(pages, seen, strict=True):
            await asyncio.wait_for(events_of(page, kinds, "ready"), 10)
        shared = live_hub.hub(redis_url)
        assert shared.channels() == {first: 3, other: 1}
        counts = await asyncio.to_thread(
            lambda: dict((k.decode(), v) for k, v in plain.pubsub_numsub(first, other)))
        assert counts == {first: 1, other: 1}  # one subscription each, not one per page
        await asyncio.to_thread(live.publish, first_job.pk, "state",
                                {"state": "RUNNING", "active": True})
        for page, kinds in zip(pages[:3], seen[:3], strict=True):
            await asyncio.wait_for(events_of(page, kinds, "state"), 10)
            assert kinds == ["ready", "state"]
        assert seen[3] == ["ready"]  # the other job's stream got nothing
        # The jobs end: each stream ends by itself (no grace here) and leaves its channel.
        for job in (first_job, other_job):
            await asyncio.to_thread(live.publish, job.pk, "state",
                                    {"state": "SUCCEEDED", "active": False})
        for page, kinds in zip(pages, seen, strict=True):
            await asyncio.wait_for(events_of(page, kinds, "never"), 10)
            assert kinds[-1] == "state"
        assert shared.channels() == {}
        gone = await asyncio.to_thread(
            lambda: dict((k.decode(), v) for k, v in plain.pubsub_numsub(first, other)))
        assert gone == {first: 0, other: 0}

    async_to_sync(scenario)()
