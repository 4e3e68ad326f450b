"""PersistentResourceService on the emulator through Google's own client: states, operations,
and for a Ray runtime a real local Ray cluster whose processes are gone after deletion."""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from google.api_core import exceptions as gexc
from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1.services.persistent_resource_service.transports import (
    PersistentResourceServiceGrpcTransport,
)
from google.protobuf import field_mask_pb2

from localvertex import auth
from localvertex.clusters.ray_nodes import ray_executable
from localvertex.replicas import job_network, team_users
from localvertex.replicas.processes import find_strays
from tests.localvertex.helpers import PARENT, TERMINAL, custom_job, python_pool, wait_for
from tests.localvertex.team_probe import probe_as_team

# Left out of `make test-fast` (the inner loop): real Ray clusters.
pytestmark = pytest.mark.slow

State = aiplatform_v1.PersistentResource.State
needs_ray = pytest.mark.skipif(
    ray_executable() is None and os.environ.get("CI") != "true",
    reason="Ray is not installed (pip install -e '.[ray]')")


@pytest.fixture
def resources(emulator):
    channel = emulator.channel()
    client = aiplatform_v1.PersistentResourceServiceClient(
        transport=PersistentResourceServiceGrpcTransport(channel=channel))
    yield client
    # Whatever a test left is deleted, so no Ray process outlives it.
    for resource in client.list_persistent_resources(parent=PARENT):
        with contextlib.suppress(gexc.NotFound):
            client.delete_persistent_resource(name=resource.name).result(timeout=60)
    channel.close()


def pool(pool_id: str, replicas: int = 1, **scaling) -> aiplatform_v1.ResourcePool:
    p = aiplatform_v1.ResourcePool(
        id=pool_id, machine_spec=aiplatform_v1.MachineSpec(machine_type="n1-standard-4"),
        replica_count=replicas)
    if scaling:
        p.autoscaling_spec = aiplatform_v1.ResourcePool.AutoscalingSpec(**scaling)
    return p


def ray_resource(workers: int, team: str = "") -> aiplatform_v1.PersistentResource:
    return aiplatform_v1.PersistentResource(
        display_name="ray", resource_pools=[pool("head"), pool("workers", workers)],
        labels={"cp-team": team} if team else {},
        resource_runtime_spec=aiplatform_v1.ResourceRuntimeSpec(ray_spec=aiplatform_v1.RaySpec(
            image_uri="us-docker.pkg.dev/vertex-ai/training/ray-cpu.2-47.py311:latest")))


def ray_pids(emulator, resource_id: str) -> list[int]:
    return [pid for pid, job, _ in find_strays(emulator.data_dir)
            if job == f"ray:{resource_id}"]


def _sandboxed_as_replicas_are(pids: list[int]) -> None:
    """Ray nodes run Ray jobs (a team's code): like a job's replicas, they see none of the
    emulator's settings and, with a root emulator, run as the sandbox's user."""
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            names = {item.split(b"=", 1)[0].decode() for item in environ if item}
            assert not names & {"DATABASE_URL", "SECRET_KEY", "REDIS_URL", "CELERY_BROKER_URL",
                                "VERTEX_EMULATOR_TOKEN", "VERTEX_EMULATOR_TOKEN_FILE",
                                "REDIS_PASSWORD", "REDIS_PASSWORD_FILE"}, (pid, names)
            uid = os.stat(f"/proc/{pid}").st_uid
            assert uid != 0 or os.geteuid() != 0, f"Ray process {pid} runs as root"


def dashboard_get(dashboard: str, path: str, token: str | None) -> urllib.request.Request:
    request = urllib.request.Request(f"http://{dashboard}{path}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    return request


def alive_nodes(emulator, name: str, dashboard: str) -> int:
    """The cluster's live nodes, as its dashboard says to the cluster's token (Ray's token
    authentication: the emulator's derives it, localvertex/auth.py)."""
    token = auth.ray_token(emulator.token, name, dashboard)
    with urllib.request.urlopen(dashboard_get(dashboard, "/nodes?view=summary", token),
                                timeout=5) as r:
        body = json.load(r)
    return sum(1 for n in body["data"]["summary"] if n["raylet"]["state"] == "ALIVE")


def test_resource_without_ray_runs_lists_and_deletes(resources):
    op = resources.create_persistent_resource(
        parent=PARENT, persistent_resource_id="plain-a",
        persistent_resource=aiplatform_v1.PersistentResource(resource_pools=[pool("a", 2)]))
    created = op.result(timeout=30)
    assert created.state == State.RUNNING
    assert created.name == f"{PARENT}/persistentResources/plain-a"
    assert not created.resource_runtime.access_uris
    assert [r.name for r in resources.list_persistent_resources(parent=PARENT)] == [created.name]
    resources.delete_persistent_resource(name=created.name).result(timeout=30)
    with pytest.raises(gexc.NotFound):
        resources.get_persistent_resource(name=created.name)


@pytest.mark.parametrize("resource,resource_id,words", [
    (aiplatform_v1.PersistentResource(), "empty", "resource_pools"),
    (aiplatform_v1.PersistentResource(resource_pools=[pool("a")]), "Bad_Id",
     "persistent_resource_id"),
    (aiplatform_v1.PersistentResource(resource_pools=[pool("a", 0, min_replica_count=0,
                                                           max_replica_count=2)]),
     "zero", "only for a Ray cluster"),
    (aiplatform_v1.PersistentResource(resource_pools=[pool("a", 2)],
                                      resource_runtime_spec=ray_resource(1).resource_runtime_spec),
     "head2", "exactly one replica"),
])
def test_vertex_refuses_bad_resources(resources, resource, resource_id, words):
    with pytest.raises(gexc.InvalidArgument, match=words):
        resources.create_persistent_resource(parent=PARENT, persistent_resource=resource,
                                             persistent_resource_id=resource_id)


def test_duplicate_id_is_already_exists(resources):
    body = aiplatform_v1.PersistentResource(resource_pools=[pool("a")])
    resources.create_persistent_resource(parent=PARENT, persistent_resource=body,
                                         persistent_resource_id="dup").result(timeout=30)
    with pytest.raises(gexc.AlreadyExists):
        resources.create_persistent_resource(parent=PARENT, persistent_resource=body,
                                             persistent_resource_id="dup")


@needs_ray
def test_ray_cluster_runs_real_nodes_scales_and_stops(emulator, resources):
    op = resources.create_persistent_resource(parent=PARENT,
                                              persistent_resource=ray_resource(2, "vision"),
                                              persistent_resource_id="ray-a")
    assert resources.get_persistent_resource(
        name=f"{PARENT}/persistentResources/ray-a").state == State.PROVISIONING
    created = op.result(timeout=180)
    assert created.state == State.RUNNING
    uris = created.resource_runtime.access_uris
    dashboard = uris["RAY_DASHBOARD_URI"]
    assert dashboard.startswith("127.0.0.1:") and "://" not in dashboard
    assert uris["RAY_CLIENT_ENDPOINT"].startswith("127.0.0.1:")
    assert alive_nodes(emulator, created.name, dashboard) == 3  # the head and two workers
    # Ray's Job Submission API (a Ray client's door) refuses whoever lacks the cluster's
    # token: none (401), another cluster's or the emulator's own (403).
    for token, code in ((None, 401), (auth.ray_token(
            emulator.token, f"{PARENT}/persistentResources/ray-b", dashboard), 403),
                        (emulator.token, 403)):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(dashboard_get(dashboard, "/api/jobs/", token), timeout=5)
        assert refused.value.code == code
    assert ray_pids(emulator, "ray-a")
    _sandboxed_as_replicas_are(ray_pids(emulator, "ray-a"))
    _walled_in_for_its_team(emulator, ray_pids(emulator, "ray-a"), "vision", dashboard)

    # Down to one worker: a node leaves the cluster.
    wanted = aiplatform_v1.PersistentResource(name=created.name,
                                              resource_pools=[pool("head"), pool("workers", 1)])
    updated = resources.update_persistent_resource(
        persistent_resource=wanted,
        update_mask=field_mask_pb2.FieldMask(paths=["resource_pools.replica_count"]),
    ).result(timeout=180)
    assert updated.state == State.RUNNING
    assert updated.resource_pools[1].replica_count == 1
    wait_for(lambda: alive_nodes(emulator, created.name, dashboard) == 2, timeout=60,
             interval=0.5)

    resources.delete_persistent_resource(name=created.name).result(timeout=120)
    assert ray_pids(emulator, "ray-a") == []
    assert not (emulator.data_dir / "clusters" / "ray-a" / "ray").exists()
    assert not Path(job_network.NETNS_DIR / job_network.name_for(emulator.data_dir,
                                                                 "ray-ray-a")).exists()


def _walled_in_for_its_team(emulator, pids: list[int], team: str, dashboard: str) -> None:
    """A labelled cluster's nodes run as its team's user, in a network namespace of the
    cluster's own (issue 40): another team's job reaches neither its GCS nor its dashboard;
    the control plane reaches the dashboard on the host's loopback (the emulator's door)."""
    if os.geteuid() != 0:
        return  # no users or namespaces of its own without root (CI runs as root)
    host_net = os.readlink("/proc/self/ns/net")
    gcs = None
    for pid in pids:
        with contextlib.suppress(FileNotFoundError, ProcessLookupError):
            uid = os.stat(f"/proc/{pid}").st_uid
            assert pwd.getpwuid(uid).pw_name == team_users.user_name(team), pid
            assert os.readlink(f"/proc/{pid}/ns/net") != host_net, pid
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
            if "start" in argv and "--head" in argv:
                gcs = int(argv[argv.index("--port") + 1])
    assert gcs is not None, "the head's `ray start` was not found"
    port = int(dashboard.rsplit(":", 1)[1])
    assert probe_as_team(emulator, "speech", [gcs, port]) == {
        gcs: "ConnectionRefusedError", port: "ConnectionRefusedError"}


def test_machine_spec_is_immutable(resources):
    # A resource without a Ray runtime: the rule is the resource's, and no cluster starts.
    created = resources.create_persistent_resource(
        parent=PARENT, persistent_resource=aiplatform_v1.PersistentResource(
            resource_pools=[pool("head")]),
        persistent_resource_id="imm").result(timeout=30)
    changed = pool("head")
    changed.machine_spec.machine_type = "n1-standard-8"
    with pytest.raises(gexc.InvalidArgument, match="immutable"):
        resources.update_persistent_resource(
            persistent_resource=aiplatform_v1.PersistentResource(
                name=created.name, resource_pools=[changed]),
            update_mask=field_mask_pb2.FieldMask(paths=["resource_pools"]))


def test_custom_job_on_a_persistent_resource_skips_provisioning(start_emulator):
    # A long provisioning delay: an ordinary job is still QUEUED while the job placed on the
    # resource has run to the end.
    emu = start_emulator("--queue-delay", "120", "--pending-delay", "0.3", name="pr")
    channel = emu.channel()
    client = aiplatform_v1.PersistentResourceServiceClient(
        transport=PersistentResourceServiceGrpcTransport(channel=channel))
    client.create_persistent_resource(
        parent=PARENT, persistent_resource_id="pool-a",
        persistent_resource=aiplatform_v1.PersistentResource(resource_pools=[pool("a", 2)]),
    ).result(timeout=30)
    ordinary = emu.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        "ordinary", [python_pool("print('hi')")]))
    placed = emu.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        "placed", [python_pool("print('hi')"), python_pool("print('hi')", replicas=2)],
        persistent_resource_id="pool-a"))
    done = wait_for(lambda: (j := emu.jobs.get_custom_job(name=placed.name)).state in TERMINAL
                    and j, timeout=60)
    assert done.state == aiplatform_v1.JobState.JOB_STATE_SUCCEEDED
    assert emu.jobs.get_custom_job(name=ordinary.name).state == \
        aiplatform_v1.JobState.JOB_STATE_QUEUED
    emu.jobs.cancel_custom_job(name=ordinary.name)

    # Vertex's rules for a job on a resource: it must exist and be RUNNING, and fit its pools.
    with pytest.raises(gexc.FailedPrecondition, match="not RUNNING"):
        emu.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
            "nowhere", [python_pool("print(1)")], persistent_resource_id="missing"))
    with pytest.raises(gexc.InvalidArgument, match="does not fit"):
        emu.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
            "too-big", [python_pool("print(1)"), python_pool("print(1)", replicas=3)],
            persistent_resource_id="pool-a"))
    client.delete_persistent_resource(name=f"{PARENT}/persistentResources/pool-a").result(
        timeout=30)
    channel.close()


@needs_ray
def test_ray_cluster_comes_back_after_an_emulator_restart(start_emulator):
    emu = start_emulator(name="restart")

    def client():
        return aiplatform_v1.PersistentResourceServiceClient(
            transport=PersistentResourceServiceGrpcTransport(
                channel=emu.channel()))

    head_only = ray_resource(0)
    del head_only.resource_pools[1]
    created = client().create_persistent_resource(
        parent=PARENT, persistent_resource=head_only,
        persistent_resource_id="ray-r").result(timeout=180)
    assert created.resource_runtime.access_uris["RAY_DASHBOARD_URI"]
    emu.restart()  # SIGTERM: the emulator stops its Ray processes on the way out
    again = wait_for(lambda: (r := client().get_persistent_resource(name=created.name)).state
                     == State.RUNNING and r, timeout=180, interval=0.5)
    dashboard = again.resource_runtime.access_uris["RAY_DASHBOARD_URI"]
    assert dashboard and alive_nodes(emu, created.name, dashboard) == 1
    assert ray_pids(emu, "ray-r")
    client().delete_persistent_resource(name=created.name).result(timeout=120)
    assert ray_pids(emu, "ray-r") == []


@needs_ray
def test_deleting_while_provisioning_leaves_no_ray_process(emulator, resources):
    op = resources.create_persistent_resource(parent=PARENT, persistent_resource=ray_resource(1),
                                              persistent_resource_id="ray-gone")
    name = f"{PARENT}/persistentResources/ray-gone"
    resources.delete_persistent_resource(name=name).result(timeout=120)
    with pytest.raises(gexc.NotFound):
        resources.get_persistent_resource(name=name)
    # The nodes that were coming up are stopped once they are up: the create fails.
    with pytest.raises(gexc.GoogleAPICallError):
        op.result(timeout=180)
    wait_for(lambda: ray_pids(emulator, "ray-gone") == [], timeout=60, interval=0.5)
