"""The cluster backend (controlplane.backends.clusters) against the emulator: Google's own
client for the PersistentResourceService, and Ray's Job Submission API over HTTP at the
dashboard address the resource reports: submit, read, stop, logs, and deletion."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from controlplane.backends import errors
from controlplane.backends.clusters import VertexClusters
from controlplane.backends.clusters_base import RayJobStatus
from localvertex.clusters.ray_nodes import ray_executable
from tests.conftest import require
from tests.localvertex.helpers import FAST_FLAGS, EmulatorProcess
from vertexplan.clusters import compose_persistent_resource

# Left out of `make test-fast` (the inner loop): a real Ray cluster through the emulator.
pytestmark = pytest.mark.slow


@pytest.fixture
def backend(settings, tmp_path) -> Iterator[VertexClusters]:
    require(ray_executable() is not None, "Ray is not installed (pip install -e '.[ray]')")
    emulator = EmulatorProcess(tmp_path / "lv", FAST_FLAGS)
    emulator.start()
    settings.VERTEX_EMULATOR_ADDR = emulator.address
    settings.VERTEX_EMULATOR_TOKEN = emulator.token
    settings.VERTEX_PROJECT = "test-project"
    settings.VERTEX_REGION = "us-central1"
    try:
        yield VertexClusters()
    finally:
        emulator.stop()  # its Ray processes stop with it


def wait(fn, ok, timeout: float = 180.0):
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if ok(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.5)


def test_ray_cluster_jobs_stop_logs_and_delete(backend):
    plan = compose_persistent_resource(
        {"resource_id": "x", "pools": [{"id": "head", "machine_type": "n1-standard-4"}],
         "ray": {}}, "us-central1")
    op = backend.create("cp-cl-1", plan.resource)
    # A retried create finds the resource an earlier try made.
    assert backend.create("cp-cl-1", plan.resource).done
    name = backend.resource_name("cp-cl-1")
    remote = wait(lambda: backend.get(name), lambda r: r.state in ("RUNNING", "ERROR"))
    assert remote.state == "RUNNING", remote.error_message
    assert backend.get_operation(op.name).done
    assert remote.replicas == {"head": 1}

    dashboard = remote.dashboard
    sid = backend.submit_ray_job(dashboard, "cp-ray-1", "python -c 'print(\"hello ray\")'",
                                 {"env_vars": {"A": "1"}}, {"cp-ray-job": "1"})
    assert sid == "cp-ray-1"
    # Submitting the same id again (a retried task) is not a second job.
    assert backend.submit_ray_job(dashboard, "cp-ray-1", "python -V", {}, {}) == "cp-ray-1"
    status = wait(lambda: backend.ray_job(dashboard, sid), lambda s: s.ended)
    assert status.status == "SUCCEEDED", status
    assert "hello ray" in backend.ray_job_logs(dashboard, sid)

    backend.submit_ray_job(dashboard, "cp-ray-2", "python -c 'import time; time.sleep(120)'",
                           {}, {})
    wait(lambda: backend.ray_job(dashboard, "cp-ray-2"), lambda s: s.status == "RUNNING",
         timeout=60)
    assert backend.stop_ray_job(dashboard, "cp-ray-2")
    status = wait(lambda: backend.ray_job(dashboard, "cp-ray-2"), lambda s: s.ended, timeout=60)
    assert status == RayJobStatus("cp-ray-2", "STOPPED", status.message)
    with pytest.raises(errors.NotFound):
        backend.ray_job(dashboard, "cp-ray-404")

    backend.delete(name)
    wait(lambda: _gone(backend, name), bool, timeout=60)
    with pytest.raises(errors.NotFound):
        backend.get(name)
    assert backend.delete(name).done  # a retried delete finds it gone


def _gone(backend, name: str) -> bool:
    try:
        backend.get(name)
    except errors.NotFound:
        return True
    return False
