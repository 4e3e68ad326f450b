"""Reconcile by listing (controlplane/runs/reconcile.py) against the real emulator through
Google's clients, the calls counted at the backend.

The emulator runs in this process, so a test writes a recorded sequence of Vertex's state
changes into its store, as its own job runner writes them (a state, its times, the error), with
no replica processes: 500 jobs cost 500 rows, not 500 processes. The control plane's rows are
written directly for the same reason, and every submission they would queue is left unsent (the
test's transaction never commits)."""

from __future__ import annotations

import math
import re
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone
from google.cloud import aiplatform_v1

from contract import labels as contract_labels
from controlplane.backends import base, errors
from controlplane.backends.training import VertexBackend
from controlplane.compose import submission, validation
from controlplane.core import signals
from controlplane.runs import lifecycle, reconcile
from controlplane.runs.models import Job, JobAttempt, JobKind, JobState, display_name_for
from controlplane.teams.models import Team
from localvertex.config import Settings
from localvertex.core.timeutil import to_timestamp
from localvertex.jobs.store import JobRecord
from localvertex.server import Emulator

HOME, ABROAD = "us-central1", "europe-west4"
STATES = aiplatform_v1.JobState
CUSTOM_JOB = {"jobSpec": {"workerPoolSpecs": [{
    "machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": 1,
    "containerSpec": {"imageUri": "us-docker.pkg.dev/p/t:1", "command": ["true"]}}]}}
SPOT_JOB = {"jobSpec": {**CUSTOM_JOB["jobSpec"], "scheduling": {"strategy": "SPOT"}}}


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Emulator]:
    # replica_user "": the one replica these tests start (the submitted job's `python -c
    # pass`) runs as the test's own user, started without fork() in a process that has loaded
    # gRPC (localvertex/replicas/fork_safety.py); the request quota is set by the tests.
    emu = Emulator(Settings(data_dir=tmp_path_factory.mktemp("listing") / "data", port=0,
                            replica_user="", crud_quota_per_minute=0))
    emu.start()
    yield emu
    emu.stop()


class CountingBackend(VertexBackend):
    """The real backend, counting its calls to Vertex by method (every region's together)."""

    calls: Counter[str] = Counter()

    def _call(self, what: str, fn: Callable[..., Any], **kwargs: Any) -> Any:
        CountingBackend.calls[what] += 1
        return super()._call(what, fn, **kwargs)


@pytest.fixture
def project(settings: Any, emulator: Emulator, db: None) -> Iterator[str]:
    """A project of its own on the shared emulator, so a test lists only its own jobs."""
    name = f"listing-{uuid.uuid4().hex[:8]}"
    settings.VERTEX_EMULATOR_ADDR = emulator.address
    settings.VERTEX_EMULATOR_TOKEN = emulator.token
    settings.VERTEX_PROJECT = name
    settings.VERTEX_REGION = HOME
    settings.CP_BACKEND = f"{CountingBackend.__module__}.CountingBackend"
    # No lost submission is re-queued: the rows written here were never queued.
    settings.CP_RESUBMIT_AFTER_S = 3600
    base.get_backend.cache_clear()
    CountingBackend.calls.clear()
    yield name
    base.get_backend.cache_clear()


@pytest.fixture
def owner(team: Team) -> Any:
    return get_user_model().objects.create_user(username="lister")


class Vertex:
    """The emulator's CustomJobs, changed as its runner changes them, at recorded times."""

    def __init__(self, emulator: Emulator, project: str) -> None:
        self.store = emulator.jobs
        self.project = project

    def create(self, job: Job, attempt: int, region: str, state: str, at: datetime) -> str:
        record_id = self.store.new_id()
        message = aiplatform_v1.CustomJob.pb()(
            name=f"projects/{self.project}/locations/{region}/customJobs/{record_id}",
            display_name=display_name_for(job.pk, attempt),
            labels=contract_labels.attempt_labels(job.pk, attempt, job.team.slug))
        message.create_time.CopyFrom(_ts(at))
        self.store.insert(JobRecord(id=record_id, project=self.project, location=region,
                                    job=message))
        self.move(message.name, state, at)
        return message.name

    def move(self, name: str, state: str, at: datetime, code: int = 0, message: str = ""
             ) -> None:
        def change(record: JobRecord) -> None:
            job = record.job
            job.state = STATES[state].value
            job.update_time.CopyFrom(_ts(at))
            if state == "JOB_STATE_RUNNING" and not job.HasField("start_time"):
                job.start_time.CopyFrom(_ts(at))
            if record.terminal:
                job.end_time.CopyFrom(_ts(at))
            if code:
                job.error.code, job.error.message = code, message

        self.store.update(name.rsplit("/", 1)[-1], change)

    def delete(self, name: str) -> None:
        self.store.delete(name.rsplit("/", 1)[-1])


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _ts(at: datetime) -> Any:
    return to_timestamp((at - _EPOCH) // timedelta(microseconds=1) * 1000)


_JOB_STATE = {"JOB_STATE_QUEUED": JobState.QUEUED, "JOB_STATE_PENDING": JobState.PENDING,
              "JOB_STATE_RUNNING": JobState.RUNNING}


def make_jobs(vertex: Vertex, team: Team, owner: Any, names: list[str], *, remote: str,
              at: datetime, region: str = HOME, spot: bool = False,
              state: str | None = None) -> dict[str, Job]:
    """Jobs on Vertex since AT in REMOTE's state, their rows as the last sweep left them."""
    state = state or _JOB_STATE[remote]
    jobs = Job.objects.bulk_create([
        Job(team=team, created_by=owner, name=name, request={},
            custom_job=SPOT_JOB if spot else CUSTOM_JOB, project=vertex.project, region=region,
            state=state, started_at=at if remote == "JOB_STATE_RUNNING" else None,
            recovery_strategy="failover" if spot else "", max_recoveries=3 if spot else 0)
        for name in names])
    JobAttempt.objects.bulk_create([
        JobAttempt(job=job, number=1, display_name=display_name_for(job.pk, 1), region=region,
                   scheduling="SPOT" if spot else "STANDARD", submitted_at=at,
                   started_at=at if remote == "JOB_STATE_RUNNING" else None,
                   vertex_name=(name := vertex.create(job, 1, region, remote, at)),
                   vertex_job_id=name.rsplit("/", 1)[-1], vertex_state=remote)
        for job in jobs])
    return {job.name: job for job in jobs}


def remote_name(job: Job) -> str:
    return job.attempts.get(number=1).vertex_name


# --- one sweep, many changes -------------------------------------------------------------------

@pytest.mark.slow  # 500 jobs through the per-job code: about 15 s on 2 idle cores
def test_500_jobs_change_state_in_one_sweep_and_the_calls_grow_with_pages(
        emulator: Emulator, project: str, team: Team, owner: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """250 jobs start and 250 end between two sweeps: one sweep brings every row in line in
    two listings of ceil(250 / page) pages each, where the per-job loop asked 500 Gets."""
    monkeypatch.setattr(reconcile, "PAGE_SIZE", 100)  # several pages a listing
    vertex = Vertex(emulator, project)
    # Minutes ago, not hours: no job has been silent long enough to be suspected of a hang.
    began = timezone.now() - timedelta(minutes=3)
    starting = make_jobs(vertex, team, owner, [f"s{i}" for i in range(250)],
                         remote="JOB_STATE_PENDING", at=began)
    ending = make_jobs(vertex, team, owner, [f"e{i}" for i in range(250)],
                       remote="JOB_STATE_RUNNING", at=began)
    changed = began + timedelta(minutes=1)
    for job in starting.values():
        vertex.move(remote_name(job), "JOB_STATE_RUNNING", changed)
    for i, job in enumerate(ending.values()):
        if i % 2:
            vertex.move(remote_name(job), "JOB_STATE_SUCCEEDED", changed)
        else:
            vertex.move(remote_name(job), "JOB_STATE_FAILED", changed, 13, "replica exited 1")

    assert reconcile.sweep(budget_s=3600) == 500

    rows = Job.objects.filter(pk__in=[j.pk for j in [*starting.values(), *ending.values()]])
    assert Counter(rows.values_list("state", flat=True)) == {
        JobState.RUNNING: 250, JobState.SUCCEEDED: 125, JobState.FAILED: 125}
    assert set(rows.filter(name__startswith="s").values_list("started_at", flat=True)) == {
        changed}
    assert set(rows.filter(name__startswith="e").values_list("ended_at", flat=True)) == {
        changed}
    assert set(rows.filter(state=JobState.FAILED).values_list("error_message", flat=True)) == {
        "replica exited 1"}
    assert JobAttempt.objects.filter(job__in=rows, vertex_state="JOB_STATE_FAILED",
                                     failure="application").count() == 125
    pages = math.ceil(250 / reconcile.PAGE_SIZE)
    assert CountingBackend.calls == {"ListCustomJobs": 2 * pages}

    # Nothing changed since: one listing finds every unfinished job, and no row moves.
    CountingBackend.calls.clear()
    events = Job.objects.get(pk=starting["s0"].pk).events.count()
    assert reconcile.sweep(budget_s=3600) == 250
    assert CountingBackend.calls == {"ListCustomJobs": pages}
    assert Job.objects.get(pk=starting["s0"].pk).events.count() == events


# --- the listing misses nothing the per-job loop finds ------------------------------------------

def _per_job_loop() -> None:
    """The sweep as it was: GetCustomJob for every unfinished job, longest unseen first, then
    each recently ended job's restart detection, health and cost, one job at a time."""
    for job_id, _ in reconcile.unfinished():
        lifecycle.reconcile(job_id)
    for job_id in Job.objects.filter(ended_at__gte=timezone.now() - reconcile.RESTART_TRAILING,
                                     kind=JobKind.JOB).values_list("pk", flat=True):
        signals.restarts_due.send(sender=Job, job_id=job_id, force=False)
        signals.job_reconciled.send(sender=Job, job_id=job_id)


def _play(emulator: Emulator, project: str, team: Team, owner: Any, t0: datetime,
          sweep: Callable[[], Any]) -> dict[str, Any]:
    """The recorded sequence: three rounds of changes on Vertex from T0, each followed by a
    sweep. Returns the rows it leaves, by job name, with every time the control plane took
    from its own clock (not Vertex's) as "now"."""
    vertex = Vertex(emulator, project)
    at = [t0 + timedelta(minutes=10 * n) for n in range(4)]
    jobs = {
        **make_jobs(vertex, team, owner, ["steady", "finisher", "deleted", "cancelled"],
                    remote="JOB_STATE_RUNNING", at=at[0]),
        **make_jobs(vertex, team, owner, ["crasher"], remote="JOB_STATE_PENDING", at=at[0]),
        **make_jobs(vertex, team, owner, ["queued"], remote="JOB_STATE_QUEUED", at=at[0]),
        **make_jobs(vertex, team, owner, ["abroad"], remote="JOB_STATE_PENDING", at=at[0],
                    region=ABROAD),
        **make_jobs(vertex, team, owner, ["stockout"], remote="JOB_STATE_RUNNING", at=at[0],
                    spot=True),
    }
    Job.objects.filter(pk=jobs["cancelled"].pk).update(state=JobState.CANCELLING)
    name = {key: remote_name(job) for key, job in jobs.items()}
    rounds: list[list[tuple[str, str, int, str]]] = [
        [("crasher", "JOB_STATE_RUNNING", 0, ""), ("abroad", "JOB_STATE_RUNNING", 0, ""),
         ("queued", "JOB_STATE_PENDING", 0, "")],
        [("finisher", "JOB_STATE_SUCCEEDED", 0, ""),
         ("crasher", "JOB_STATE_FAILED", 13, "replica workerpool0-0 exited with status 1"),
         ("deleted", "JOB_STATE_SUCCEEDED", 0, ""),
         ("cancelled", "JOB_STATE_CANCELLING", 0, ""),
         ("stockout", "JOB_STATE_FAILED", 8, "The job was preempted 7 times (STOCKOUT)."),
         ("queued", "JOB_STATE_RUNNING", 0, "")],
        [("abroad", "JOB_STATE_SUCCEEDED", 0, ""),
         ("cancelled", "JOB_STATE_CANCELLED", 1, "CANCELED")],
    ]
    sweep()
    for n, changes in enumerate(rounds, start=1):
        for key, state, code, message in changes:
            vertex.move(name[key], state, at[n], code, message)
        if n == 2:
            vertex.delete(name["deleted"])  # ended and deleted before any sweep saw it
        sweep()
    return _rows(jobs, name)


# Event figures taken from the control plane's clock at the time of the sweep, not from Vertex:
# a recovery's jittered wait, a hang's silence so far (also in its words: "no step for 6601 s").
CLOCKED = {"delay_s", "silent_s"}
_SECONDS = re.compile(r"\b\d+ s\b")


def _rows(jobs: dict[str, Job], names: dict[str, str]) -> dict[str, Any]:
    started = timezone.now() - timedelta(minutes=5)

    def plain(value: Any) -> Any:
        if isinstance(value, datetime) and value > started:
            return "now"
        if isinstance(value, str):  # a message naming a CustomJob: the same job either way
            for key, name in names.items():
                value = value.replace(name, f"<{key}>")
            value = _SECONDS.sub("N s", value)
        return value

    out: dict[str, Any] = {}
    for key, job in jobs.items():
        job.refresh_from_db()
        out[key] = {
            "job": [plain(getattr(job, f)) for f in (
                "state", "error_message", "attempt", "recoveries", "restarts", "started_at",
                "ended_at", "cost_micros", "lost_micros")],
            "attempts": [[plain(getattr(a, f)) for f in (
                "number", "reason", "region", "scheduling", "vertex_state", "error_code",
                "error_message", "failure", "started_at", "ended_at", "resume_step")]
                for a in job.attempts.order_by("number")],
            "events": [(e.kind, e.attempt, {k: plain(v) for k, v in e.data.items()
                                            if k not in CLOCKED})
                       for e in job.events.order_by("id")],
        }
    return out


def test_the_listing_ends_with_the_rows_the_per_job_loop_ends_with(
        emulator: Emulator, project: str, team: Team, owner: Any, settings: Any) -> None:
    t0 = timezone.now().replace(microsecond=0) - timedelta(hours=2)
    by_get = _play(emulator, project, team, owner, t0, _per_job_loop)
    gets = CountingBackend.calls["GetCustomJob"]
    Job.objects.all().delete()
    settings.VERTEX_PROJECT = f"{project}-2"
    base.get_backend.cache_clear()
    CountingBackend.calls.clear()

    by_listing = _play(emulator, f"{project}-2", team, owner, t0,
                       lambda: reconcile.sweep(budget_s=3600))

    assert by_listing == by_get
    # The sequence did what it says, so the comparison compares something.
    assert {k: v["job"][0] for k, v in by_listing.items()} == {
        "steady": JobState.RUNNING, "finisher": JobState.SUCCEEDED, "deleted": JobState.FAILED,
        "cancelled": JobState.CANCELLED, "crasher": JobState.FAILED,
        "queued": JobState.RUNNING, "abroad": JobState.SUCCEEDED,
        "stockout": JobState.QUEUED}
    assert "no longer exists on Vertex" in by_listing["deleted"]["job"][1]
    assert by_listing["abroad"]["attempts"][0][2] == ABROAD
    assert [a[:2] for a in by_listing["stockout"]["attempts"]] == [
        [1, "submit"], [2, "recovery"]]
    assert by_listing["stockout"]["attempts"][0][7] == "stockout"
    # The per-job loop asked a Get of every unfinished job in every sweep; the listing asked
    # one only for the job the lists could not tell about (deleted), once.
    assert gets == 8 + 8 + 8 + 4
    assert CountingBackend.calls["GetCustomJob"] == 1
    assert CountingBackend.calls["ListCustomJobs"] <= 4 * 4


# --- the request quota -------------------------------------------------------------------------

@pytest.fixture
def quota_job(project: str, team: Team, owner: Any, emulator: Emulator,
              django_capture_on_commit_callbacks: Any) -> Iterator[Job]:
    body = {"name": "rated", "command": ["python", "-c", "pass"], "args": [],
            "chief": {"machine_type": "n1-standard-4"}}
    checked = validation.check(validation.read_request(body), team)
    assert checked.ok, checked.errors
    with django_capture_on_commit_callbacks(execute=False):
        job = submission.create_job(team=team, user=owner, checked=checked)
    yield job
    emulator.request_quota.set_limit(0)


def test_a_create_refused_for_the_request_rate_is_tried_again_not_doubled(
        quota_job: Job, project: str, emulator: Emulator) -> None:
    """Past Vertex's resource management requests a minute, CreateCustomJob is refused with
    RESOURCE_EXHAUSTED: the submission is a transient failure (its task retries with backoff),
    not a quota wait, nothing is recorded, and the next try creates the CustomJob once."""
    emulator.request_quota.set_limit(1)  # the submission's lookup takes the minute's one call
    with pytest.raises(errors.RateLimited) as refused:
        lifecycle.submit(quota_job.pk)
    assert isinstance(refused.value, errors.TransientBackendError)
    assert not isinstance(refused.value, errors.QuotaExceeded)
    assert refused.value.quota["quota_metric"].endswith("/resource_management_requests")
    job = Job.objects.get(pk=quota_job.pk)
    assert job.state == JobState.QUEUED and job.quota_wait == {}
    assert job.current_attempt().vertex_name == ""
    assert emulator.jobs.list(project, HOME) == []

    # The quota's next minute (raised here rather than waited for): the retry goes through.
    emulator.request_quota.set_limit(0)
    lifecycle.submit(quota_job.pk)
    lifecycle.submit(quota_job.pk)
    created = emulator.jobs.list(project, HOME)
    assert [r.job.display_name for r in created] == [display_name_for(quota_job.pk, 1)]
    assert Job.objects.get(pk=quota_job.pk).current_attempt().vertex_name == created[0].job.name


def test_a_throttled_listing_leaves_its_region_for_the_next_sweep(
        emulator: Emulator, project: str, team: Team, owner: Any) -> None:
    vertex = Vertex(emulator, project)
    began = timezone.now() - timedelta(hours=1)
    jobs = make_jobs(vertex, team, owner, ["a", "b"], remote="JOB_STATE_PENDING", at=began)
    for job in jobs.values():
        vertex.move(remote_name(job), "JOB_STATE_RUNNING", began + timedelta(minutes=1))
    emulator.request_quota.set_limit(1)
    try:
        assert reconcile.sweep() == 2  # the listing takes the minute's one call
        for job in jobs.values():
            vertex.move(remote_name(job), "JOB_STATE_SUCCEEDED", began + timedelta(minutes=2))
        CountingBackend.calls.clear()
        assert reconcile.sweep() == 0, "refused: no job is touched, none is got one by one"
    finally:
        emulator.request_quota.set_limit(0)
    assert CountingBackend.calls == {"ListCustomJobs": 1}
    assert set(Job.objects.filter(pk__in=[j.pk for j in jobs.values()])
               .values_list("state", flat=True)) == {JobState.RUNNING}
    assert reconcile.sweep() == 2
    assert set(Job.objects.filter(pk__in=[j.pk for j in jobs.values()])
               .values_list("state", flat=True)) == {JobState.SUCCEEDED}


def test_a_backend_that_refuses_the_filter_is_asked_job_by_job(
        emulator: Emulator, project: str, team: Team, owner: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    vertex = Vertex(emulator, project)
    began = timezone.now() - timedelta(hours=1)
    jobs = make_jobs(vertex, team, owner, ["a", "b"], remote="JOB_STATE_PENDING", at=began)
    for job in jobs.values():
        vertex.move(remote_name(job), "JOB_STATE_RUNNING", began + timedelta(minutes=1))
    monkeypatch.setattr(reconcile, "UNFINISHED_FILTER", "labels.cp-job:* AND reticulated=1")
    assert reconcile.sweep() == 2
    assert CountingBackend.calls == {"ListCustomJobs": 1, "GetCustomJob": 2}
    assert set(Job.objects.filter(pk__in=[j.pk for j in jobs.values()])
               .values_list("state", flat=True)) == {JobState.RUNNING}


def test_filters_are_what_vertex_documents() -> None:
    """ListCustomJobs filters on display_name, state, create_time and labels only."""
    assert reconcile.UNFINISHED_FILTER.startswith("labels.cp-job:* AND labels.cp-attempt:*")
    since = datetime(2026, 11, 29, 12, 30, 5, 123456, tzinfo=UTC)
    text = reconcile.ended_filter(since)
    assert 'create_time>="2026-11-29T12:30:05Z"' in text
    assert "update_time" not in text + reconcile.UNFINISHED_FILTER
