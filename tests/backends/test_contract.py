"""The backend ports (controlplane/backends/base.py, serving_base.py) as the control plane relies
on them, run against both sides: the scripted fakes the unit tests use (tests/fakes.py,
tests/serving/fakes.py) and the real backend classes, Google's client libraries talking to a
real emulator process (`python -m localvertex`, one for the module, started as
config/devstack.py starts it). The emulator follows Vertex; where a fake disagrees, the fake is
wrong.

What is held: create, get, find (Vertex's list by display name, then labels) and cancel of
CustomJobs and HyperparameterTuningJobs; create, get and delete of endpoints; retried creates
and deletes; and what goes wrong, in the app's own exceptions (controlplane/backends/errors.py).
Persistent resources have no fake, and deploying needs a model server: tests/clusters and
tests/serving cover them against the emulator alone."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import pytest

from config.devstack import ROOT, ProcessGuard, wait_for_port
from config.ports import reserve_port
from controlplane.backends import errors
from controlplane.backends.base import Backend, RemoteJob, RemoteTuningJob
from controlplane.backends.serving import VertexServing
from controlplane.backends.serving_base import EndpointAccess, Operation, ServingBackend
from controlplane.backends.training import VertexBackend
from localvertex import auth
from tests.fakes import FakeTuningBackend
from tests.serving.fakes import FakeServing

PROJECT = "contract-project"
REGION = "us-central1"
IMAGE = "us-docker.pkg.dev/contract/trainer:1"


@dataclass
class Side:
    """One side of the contract: a training and a serving backend, and how a job reaches its
    end there (the emulator runs it; on the fake, the test plays Vertex and scripts it)."""

    name: str
    backend: Backend
    serving: ServingBackend
    run_to_end: Callable[[str], RemoteJob]
    settle: Callable[[Operation], Operation]


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimpleNamespace]:
    data = tmp_path_factory.mktemp("contract")
    port = reserve_port()
    log = data / "emulator.log"
    with open(log, "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "localvertex", "--host", "127.0.0.1", "--port", str(port),
             "--admin-port", "0", "--data-dir", str(data / "localvertex"),
             "--crud-quota-per-minute", "0"],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    guard = ProcessGuard(data / "emulator.group")
    guard.watch([proc])
    try:
        try:
            wait_for_port(port, 60, proc)
        except (RuntimeError, TimeoutError) as exc:
            raise RuntimeError(f"the emulator did not start: {exc}\n"
                               f"{log.read_text(errors='replace')[-3000:]}") from exc
        yield SimpleNamespace(address=f"127.0.0.1:{port}",
                              token=auth.read(data / "localvertex" / auth.TOKEN_FILE))
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        guard.close()


def _poll(read: Callable[[], Any], done: Callable[[Any], bool], what: str,
          timeout_s: float = 60) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}; last: {value}")
        time.sleep(0.1)


def _fake_side() -> Side:
    backend, serving = FakeTuningBackend(), FakeServing()
    backend.project = serving.project = PROJECT

    def run_to_end(name: str) -> RemoteJob:
        now = datetime.now(UTC)
        backend.set_state(name, "JOB_STATE_SUCCEEDED", start_time=now, end_time=now)
        return backend.get_custom_job(name)

    return Side("fake", backend, serving, run_to_end, lambda op: op)


def _emulator_side(settings: Any, emulator: SimpleNamespace) -> Side:
    settings.VERTEX_EMULATOR_ADDR = emulator.address
    settings.VERTEX_EMULATOR_TOKEN = emulator.token
    settings.VERTEX_PROJECT = PROJECT
    settings.VERTEX_REGION = REGION
    backend, serving = VertexBackend(), VertexServing()

    def run_to_end(name: str) -> RemoteJob:
        return _poll(lambda: backend.get_custom_job(name), lambda job: job.is_terminal,
                     f"{name} to end")

    def settle(op: Operation) -> Operation:
        return op if op.done else _poll(lambda: serving.get_operation(op.name),
                                        lambda o: o.done, f"{op.name} to be done")

    return Side("emulator", backend, serving, run_to_end, settle)


@pytest.fixture(params=["fake", "emulator"])
def side(request: pytest.FixtureRequest, settings: Any) -> Side:
    if request.param == "fake":
        return _fake_side()
    return _emulator_side(settings, request.getfixturevalue("emulator"))


def unique(prefix: str = "cp-contract") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def custom_job(display_name: str, *, labels: dict[str, str] | None = None,
               code: str = "print('done')") -> dict[str, Any]:
    """A CustomJob as the composer writes it (Vertex REST JSON), one replica running CODE."""
    return {"displayName": display_name,
            "labels": labels if labels is not None else {"cp-job": "7", "cp-attempt": "1"},
            "jobSpec": {"workerPoolSpecs": [{
                "machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
                "containerSpec": {"imageUri": IMAGE, "command": ["python", "-c", code]}}]}}


def tuning_job(display_name: str, **overrides: Any) -> dict[str, Any]:
    return {"displayName": display_name, "labels": {"cp-sweep": "3"},
            "studySpec": {"metrics": [{"metricId": "loss", "goal": "MINIMIZE"}],
                          "parameters": [{"parameterId": "lr",
                                          "doubleValueSpec": {"minValue": 0.001,
                                                              "maxValue": 0.1}}],
                          "algorithm": "RANDOM_SEARCH"},
            "maxTrialCount": 1, "parallelTrialCount": 1,
            "trialJobSpec": custom_job("trial", code="import time; time.sleep(60)")["jobSpec"],
            **overrides}


# --- CustomJobs ----------------------------------------------------------------------------

def test_a_created_job_is_read_and_found_again_by_display_name_and_labels(side: Side) -> None:
    backend, name = side.backend, unique()
    labels = {"cp-job": "7", "cp-attempt": "1", "cp-team": "vision"}
    before = datetime.now(UTC)
    created = backend.create_custom_job(custom_job(name, labels=labels))

    assert created.name.startswith(f"projects/{PROJECT}/locations/{REGION}/customJobs/")
    assert created.job_id == created.name.rsplit("/", 1)[1] and created.job_id.isdigit()
    assert (created.display_name, created.labels) == (name, labels)
    assert created.state == "JOB_STATE_QUEUED" and not created.is_terminal
    assert created.create_time is not None and created.create_time >= before.replace(
        microsecond=0)
    read = backend.get_custom_job(created.name)
    assert (read.name, read.display_name, read.labels) == (created.name, name, labels)

    # What a retried submission does before creating again (controlplane/runs/lifecycle.py).
    assert backend.find_custom_job(name, labels).name == created.name
    assert backend.find_custom_job(name, {"cp-job": "7"}).name == created.name
    assert backend.find_custom_job(name, {**labels, "cp-attempt": "2"}) is None
    assert backend.find_custom_job(unique(), {}) is None


def test_jobs_sharing_a_display_name_are_told_apart_by_their_labels(side: Side) -> None:
    """Vertex does not make display names unique: a second create makes a second job."""
    backend, name = side.backend, unique()
    first = backend.create_custom_job(custom_job(name, labels={"cp-attempt": "1"}))
    second = backend.create_custom_job(custom_job(name, labels={"cp-attempt": "2"}))
    assert first.name != second.name
    assert backend.find_custom_job(name, {"cp-attempt": "1"}).name == first.name
    assert backend.find_custom_job(name, {"cp-attempt": "2"}).name == second.name


def test_jobs_are_listed_by_labels_state_and_creation_a_page_a_call(side: Side) -> None:
    """What the reconciler reads (controlplane/runs/reconcile.py): Vertex's list filter on
    labels, state and create_time, one page per call."""
    backend, team = side.backend, unique("team")
    labels = {"cp-job": "7", "cp-attempt": "1", "cp-team": team}
    ended = backend.create_custom_job(custom_job(unique(), labels=labels))
    side.run_to_end(ended.name)
    running = [backend.create_custom_job(custom_job(
        unique(), labels=labels, code="import time; time.sleep(60)")) for _ in range(2)]
    try:
        ours = f'labels.cp-team="{team}" AND labels.cp-attempt:*'
        unfinished = f'{ours} AND state!="JOB_STATE_SUCCEEDED"'
        first = backend.list_custom_jobs(unfinished, page_size=1)
        assert len(first.jobs) == 1 and first.next_page_token
        second = backend.list_custom_jobs(unfinished, page_size=1,
                                          page_token=first.next_page_token)
        assert {j.name for j in first.jobs + second.jobs} == {j.name for j in running}
        assert second.next_page_token == ""
        done = backend.list_custom_jobs(f'{ours} AND state="JOB_STATE_SUCCEEDED" AND '
                                        f'create_time>="{ended.create_time:%Y-%m-%dT%H:%M:%SZ}"',
                                        page_size=10)
        assert [(j.name, j.state) for j in done.jobs] == [(ended.name, "JOB_STATE_SUCCEEDED")]
        assert backend.list_custom_jobs(f'{ours} AND create_time>="2999-01-01T00:00:00Z"',
                                        page_size=10).jobs == []
        with pytest.raises(errors.InvalidJobSpec):
            backend.list_custom_jobs(f"{ours} AND reticulated=1", page_size=10)
    finally:
        for job in running:
            backend.cancel_custom_job(job.name)


def test_a_job_that_ended_cannot_be_cancelled(side: Side) -> None:
    backend = side.backend
    created = backend.create_custom_job(custom_job(unique()))
    ended = side.run_to_end(created.name)
    assert ended.state == "JOB_STATE_SUCCEEDED" and ended.is_terminal
    assert ended.end_time is not None and ended.start_time is not None
    assert ended.error_code == 0 and ended.error_message == ""
    with pytest.raises(errors.FailedPrecondition):
        backend.cancel_custom_job(created.name)
    assert backend.get_custom_job(created.name).state == "JOB_STATE_SUCCEEDED"


def test_a_cancelled_job_is_cancelling_at_once(side: Side) -> None:
    backend = side.backend
    created = backend.create_custom_job(custom_job(unique(), code="import time; time.sleep(60)"))
    backend.cancel_custom_job(created.name)
    # CANCELLING until every replica has stopped, then CANCELLED: never back to running.
    assert backend.get_custom_job(created.name).state in (
        "JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED")


def test_an_unknown_job_is_not_found(side: Side) -> None:
    name = f"projects/{PROJECT}/locations/{REGION}/customJobs/987654321987"
    with pytest.raises(errors.NotFound):
        side.backend.get_custom_job(name)
    with pytest.raises(errors.NotFound):
        side.backend.cancel_custom_job(name)


@pytest.mark.parametrize("broken", [
    {"displayName": ""},
    {"labels": {"cp-team": "Vision"}},           # label values are lowercase
    {"labels": {"7-job": "1"}},                  # a label key starts with a letter
    {"jobSpec": {"workerPoolSpecs": []}},
])
def test_a_job_vertex_would_refuse_is_invalid_and_not_created(side: Side,
                                                              broken: dict[str, Any]) -> None:
    name = unique()
    with pytest.raises(errors.InvalidJobSpec):
        side.backend.create_custom_job({**custom_job(name), **broken})
    assert side.backend.find_custom_job(name, {}) is None


def test_a_filter_that_matches_no_entry_reads_one_empty_last_page(side: Side) -> None:
    page = side.backend.list_log_entries(
        f'resource.type="ml_job" AND resource.labels.job_id="{uuid.uuid4().int % 10**12}"',
        page_size=100)
    assert page.entries == [] and page.next_page_token == ""


# --- HyperparameterTuningJobs --------------------------------------------------------------

def test_a_tuning_job_is_created_found_and_cancelled(side: Side) -> None:
    backend, name = side.backend, unique()
    created = backend.create_tuning_job(tuning_job(name))
    assert isinstance(created, RemoteTuningJob)
    assert created.name.startswith(
        f"projects/{PROJECT}/locations/{REGION}/hyperparameterTuningJobs/")
    assert (created.display_name, created.labels) == (name, {"cp-sweep": "3"})
    assert created.state == "JOB_STATE_PENDING" and created.create_time is not None
    assert backend.get_tuning_job(created.name).name == created.name
    found = backend.find_tuning_job(name, {"cp-sweep": "3"})
    assert found is not None and found.name == created.name
    assert backend.find_tuning_job(name, {"cp-sweep": "4"}) is None

    backend.cancel_tuning_job(created.name)
    assert backend.get_tuning_job(created.name).state in (
        "JOB_STATE_CANCELLING", "JOB_STATE_CANCELLED")
    with pytest.raises(errors.NotFound):
        backend.get_tuning_job(created.name.rsplit("/", 1)[0] + "/987654321987")


@pytest.mark.parametrize("broken", [
    {"studySpec": {"metrics": [], "parameters": [{"parameterId": "lr", "doubleValueSpec": {
        "minValue": 0.1, "maxValue": 0.2}}]}},
    {"maxTrialCount": 0},
    {"parallelTrialCount": 0},
    {"trialJobSpec": {"workerPoolSpecs": []}},
])
def test_a_tuning_job_vertex_would_refuse_is_invalid(side: Side,
                                                     broken: dict[str, Any]) -> None:
    name = unique()
    with pytest.raises(errors.InvalidJobSpec):
        side.backend.create_tuning_job(tuning_job(name, **broken))
    assert side.backend.find_tuning_job(name, {}) is None


# --- endpoints -----------------------------------------------------------------------------

def endpoint_id() -> str:
    return str(uuid.uuid4().int % 10**9 or 1)


def test_an_endpoint_is_created_once_read_and_deleted_once(side: Side) -> None:
    serving, eid = side.serving, endpoint_id()
    name = serving.endpoint_name(eid)
    assert name == f"projects/{PROJECT}/locations/{REGION}/endpoints/{eid}"
    op = side.settle(serving.create_endpoint(eid, "contract", {"cp-endpoint": eid}))
    assert not op.failed
    remote = serving.get_endpoint(name)
    assert (remote.name, remote.display_name, remote.labels) == (
        name, "contract", {"cp-endpoint": eid})
    assert remote.deployed_models == () and remote.traffic_split == {}
    assert remote.dedicated_dns == "" and remote.service_attachment == ""

    # A retried create (the task ran twice) finds the endpoint the first one made.
    again = side.settle(serving.create_endpoint(eid, "contract", {"cp-endpoint": eid}))
    assert again.done and not again.failed
    assert serving.get_endpoint(name).labels == {"cp-endpoint": eid}

    assert not side.settle(serving.delete_endpoint(name)).failed
    with pytest.raises(errors.NotFound):
        serving.get_endpoint(name)
    # A retried delete finds it gone, and is done.
    assert side.settle(serving.delete_endpoint(name)).done


def test_a_dedicated_endpoint_has_a_dns_name_of_its_own(side: Side) -> None:
    serving, eid = side.serving, endpoint_id()
    side.settle(serving.create_endpoint(eid, "dedicated", {},
                                        EndpointAccess(dedicated=True)))
    remote = serving.get_endpoint(serving.endpoint_name(eid))
    # Vertex's is a DNS name of its own (<id>.<region>-<project number>...), the emulator's
    # its HTTPS listener's host:port (localvertex/serving/rest.py): both where it is called.
    assert remote.dedicated_dns and remote.service_attachment == ""
    side.settle(serving.delete_endpoint(remote.name))


def test_an_endpoint_without_a_display_name_is_invalid(side: Side) -> None:
    serving, eid = side.serving, endpoint_id()
    with pytest.raises(errors.InvalidJobSpec):
        serving.create_endpoint(eid, "", {})
    with pytest.raises(errors.NotFound):
        serving.get_endpoint(serving.endpoint_name(eid))



# --- system metrics (Cloud Monitoring) -------------------------------------------------------

def test_a_running_jobs_replicas_are_read_from_cloud_monitoring(
        settings: Any, emulator: SimpleNamespace) -> None:
    """VertexBackend.replica_metrics through google-cloud-monitoring, against the emulator's
    samples of a running replica's process (the fake's answers are scripted by the tests)."""
    backend = _emulator_side(settings, emulator).backend
    busy = "import time\nend = time.time() + 60\nwhile time.time() < end: pass\n"
    job = backend.create_custom_job(custom_job(unique(), code=busy))
    try:
        def sampled() -> list:
            now = datetime.now(UTC)
            found = backend.replica_metrics(job.job_id, now - timedelta(minutes=10), now)
            return found if found and found[0].memory_bytes and found[0].cpu else []

        (replica,) = _poll(sampled, bool, "the replica's first sample", timeout_s=30)
        assert replica.replica == "workerpool0-0"
        assert replica.memory_bytes[-1][1] > 1_000_000 and 0 < replica.memory[-1][1] < 1
        assert replica.cpu[-1][1] >= 0 and replica.accelerator == []
        now = datetime.now(UTC)
        assert backend.replica_metrics("1", now - timedelta(minutes=10), now) == []
    finally:
        backend.cancel_custom_job(job.name)
