"""google.cloud.aiplatform.v1.PersistentResourceService: Create, Get, List, Update (replica
counts), Delete and Reboot, with Vertex's states (VERTEX_FACTS.md A2). Create, Update, Delete
and Reboot are long-running operations (core/operations.py) that finish when the nodes are up
or gone.

A resource with a Ray spec runs a real local Ray cluster (ray_nodes.py): the head on the head
pool's first replica, a worker node for every other replica of every pool. Its
resource_runtime.access_uris carry the dashboard and client addresses, as Vertex reports them
(host:port, no scheme). A resource without Ray holds no processes: its nodes are bookkeeping
that CustomJobs placed on it start on without the provisioning delay.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from functools import partial
from pathlib import Path

import grpc
from google.cloud import aiplatform_v1
from google.protobuf import empty_pb2
from google.rpc import status_pb2

from localvertex import auth
from localvertex.clusters.ray_nodes import RayCluster, RayUnavailable
from localvertex.core.errors import ApiError, failed_precondition, invalid, not_found
from localvertex.core.objects import object_store
from localvertex.core.operations import Operations
from localvertex.core.resources import check_parent, location_of, now, page
from localvertex.core.store import Conflict
from localvertex.replicas.sandbox import Identity, SandboxError
from localvertex.replicas.team_users import identity_for, team_of

log = logging.getLogger(__name__)

SERVICE = "google.cloud.aiplatform.v1.PersistentResourceService"
KIND = "persistent_resource"
ResourcePb = aiplatform_v1.PersistentResource.pb()
State = ResourcePb.State
ID = re.compile(r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$")
NAME = re.compile(r"^projects/[^/]+/locations/[^/]+/persistentResources/[^/]+$")
_UPDATABLE = {"resource_pools", "resource_pools.replica_count", "labels", "display_name"}


def _pb(cls):
    return cls.pb()


CreateRequest = _pb(aiplatform_v1.CreatePersistentResourceRequest)
GetRequest = _pb(aiplatform_v1.GetPersistentResourceRequest)
ListRequest = _pb(aiplatform_v1.ListPersistentResourcesRequest)
ListResponse = _pb(aiplatform_v1.ListPersistentResourcesResponse)
DeleteRequest = _pb(aiplatform_v1.DeletePersistentResourceRequest)
UpdateRequest = _pb(aiplatform_v1.UpdatePersistentResourceRequest)
RebootRequest = _pb(aiplatform_v1.RebootPersistentResourceRequest)
CreateMetadata = _pb(aiplatform_v1.CreatePersistentResourceOperationMetadata)
UpdateMetadata = _pb(aiplatform_v1.UpdatePersistentResourceOperationMetadata)
RebootMetadata = _pb(aiplatform_v1.RebootPersistentResourceOperationMetadata)
DeleteMetadata = _pb(aiplatform_v1.DeleteOperationMetadata)


def _name_pools(resource) -> None:
    """ResourcePool.id is the user's to give, "otherwise, it's generated automatically"
    (persistent_resource.proto); the preview SDK's samples give none. Vertex's generated form
    is UNCONFIRMED: here pool-<index>, skipping ids the user gave."""
    taken = {pool.id for pool in resource.resource_pools if pool.id}
    for index, pool in enumerate(resource.resource_pools):
        if not pool.id:
            pool.id = next(f"pool-{n}" for n in range(index, index + len(taken) + 1)
                           if f"pool-{n}" not in taken)
            taken.add(pool.id)


def worker_nodes(resource) -> int:
    """Worker nodes of a Ray cluster: every replica but the head pool's first."""
    return max(sum(pool.replica_count for pool in resource.resource_pools) - 1, 0)


class PersistentResourceService:
    def __init__(self, db_path: Path, operations: Operations, data_dir: Path,
                 workdir: Path, provisioning_delay_s: float,
                 who: Identity | None = None, token: str = "") -> None:
        self.store = object_store(db_path, KIND, ResourcePb)
        self.who = who  # Ray nodes run as the sandbox's replica user (replicas/sandbox.py)
        # The emulator's token, from which each cluster's Ray token is derived (auth.py).
        self.token = token
        self.operations = operations
        self.data_dir = data_dir
        self.workdir = workdir
        self.provisioning_delay_s = provisioning_delay_s
        self._clusters: dict[str, RayCluster] = {}
        self._lock = threading.Lock()
        self._stopping = False

    # -- reading -------------------------------------------------------------------------------

    def load(self, name: str):
        if not NAME.match(name):
            raise invalid(
                f"name {name!r} is not projects/P/locations/L/persistentResources/ID.")
        resource = self.store.get(name)
        if resource is None:
            raise not_found(f'PersistentResource "{name}" not found.')
        return resource

    def get_persistent_resource(self, request, context: grpc.ServicerContext):
        return self.load(request.name)

    def list_persistent_resources(self, request, context: grpc.ServicerContext):
        parent = check_parent(request.parent)
        chunk, token = page(self.store.select("parent = ?", (parent,)), request.page_size,
                            request.page_token)
        return ListResponse(persistent_resources=chunk, next_page_token=token)

    def running(self, name: str):
        """The resource if it is RUNNING (what a CustomJob placed on it needs), else None."""
        resource = self.store.get(name)
        return resource if resource is not None and resource.state == State.RUNNING else None

    def ray_cluster(self, name: str) -> RayCluster | None:
        with self._lock:
            return self._clusters.get(name)

    # -- checks ----------------------------------------------------------------------------------

    @staticmethod
    def _check(resource) -> None:
        pools = resource.resource_pools
        if not pools:
            raise invalid("persistent_resource.resource_pools is required.")
        ids = set()
        ray = resource.resource_runtime_spec.HasField("ray_spec")
        for i, pool in enumerate(pools):
            where = f"persistent_resource.resource_pools[{i}]"
            if not pool.id or not ID.match(pool.id) or pool.id in ids:
                raise invalid(f"{where}.id {pool.id!r} must be a unique id matching "
                              f"{ID.pattern}.")
            ids.add(pool.id)
            if not pool.machine_spec.machine_type:
                raise invalid(f"{where}.machine_spec.machine_type is required.")
            scaling = pool.autoscaling_spec
            if pool.HasField("autoscaling_spec"):
                if scaling.min_replica_count == 0 and not ray:
                    raise invalid(f"{where}.autoscaling_spec.min_replica_count may be 0 "
                                  "only for a Ray cluster.")
                if scaling.max_replica_count < scaling.min_replica_count:
                    raise invalid(f"{where}.autoscaling_spec.max_replica_count is below "
                                  "min_replica_count.")
            elif pool.replica_count < 1:
                raise invalid(f"{where}.replica_count must be at least 1.")
        if ray:
            spec = resource.resource_runtime_spec.ray_spec
            if not spec.image_uri and not spec.resource_pool_images:
                raise invalid("ray_spec: image_uri or resource_pool_images is required.")
            if spec.resource_pool_images and set(spec.resource_pool_images) != ids:
                raise invalid("ray_spec.resource_pool_images must name every pool.")
            head = spec.head_node_resource_pool_id or pools[0].id
            if head not in ids:
                raise invalid(f"ray_spec.head_node_resource_pool_id {head!r} names no "
                              "resource pool.")
            if next(p for p in pools if p.id == head).replica_count != 1:
                raise invalid("The Ray head pool must have exactly one replica.")

    # -- creating --------------------------------------------------------------------------------

    def create_persistent_resource(self, request, context: grpc.ServicerContext):
        parent = check_parent(request.parent)
        resource_id = request.persistent_resource_id
        if not ID.match(resource_id or ""):
            raise invalid(f"persistent_resource_id {resource_id!r} must match "
                          f"{ID.pattern}.")
        resource = ResourcePb()
        resource.CopyFrom(request.persistent_resource)
        _name_pools(resource)
        self._check(resource)
        resource.name = f"{parent}/persistentResources/{resource_id}"
        for field in ("state", "error", "resource_runtime", "start_time"):
            resource.ClearField(field)
        if resource.resource_runtime_spec.HasField("ray_spec"):
            spec = resource.resource_runtime_spec.ray_spec
            spec.head_node_resource_pool_id = (spec.head_node_resource_pool_id
                                               or resource.resource_pools[0].id)
        resource.state = State.PROVISIONING
        resource.create_time.CopyFrom(now())
        resource.update_time.CopyFrom(now())
        try:
            self.store.insert(resource)
        except Conflict as exc:
            raise ApiError(grpc.StatusCode.ALREADY_EXISTS,
                           f"PersistentResource {resource.name} already exists.") from exc
        name = resource.name
        return self.operations.run(parent, CreateMetadata(), lambda: self._provision(name),
                                   f"provision-{resource_id}")

    def _provision(self, name: str):
        time.sleep(self.provisioning_delay_s)  # VMs do not come up at once
        resource = self.load(name)
        try:
            uris = self._start_ray(resource)
        except RayUnavailable as exc:
            self._set(name, State.ERROR, error=str(exc))
            raise failed_precondition(f"{name}: {exc}") from exc
        return self._set(name, State.RUNNING, uris=uris)

    def _start_ray(self, resource) -> dict[str, str]:
        if not resource.resource_runtime_spec.HasField("ray_spec"):
            return {}
        rid = resource.name.rsplit("/", 1)[-1]
        try:
            # A cluster the control plane labelled for a team runs as that team's user, as its
            # jobs and model servers do: no other team's process can read or signal its nodes.
            who = identity_for(self.who, team_of(dict(resource.labels)))
        except SandboxError as exc:
            raise RayUnavailable(f"its nodes cannot run as its team's user: {exc}") from exc
        cluster = RayCluster(
            rid, self.data_dir, self.workdir, who=who,
            token_for=partial(auth.ray_token, self.token, resource.name) if self.token else None)
        with self._lock:
            old = self._clusters.pop(resource.name, None)
        if old is not None:
            old.stop()
        try:
            cluster.start(worker_nodes(resource))
        except Exception:
            cluster.stop()
            raise
        with self._lock:
            # Deleted, or the emulator stopping, while the nodes came up: nothing may keep them.
            current = self.store.get(resource.name)
            if self._stopping or current is None or current.state == State.STOPPING:
                cluster.stop()
                raise failed_precondition(f"{resource.name} was deleted while it was "
                                          "provisioning.")
            self._clusters[resource.name] = cluster
        return {
            "RAY_DASHBOARD_URI": cluster.dashboard_address,
            "RAY_CLIENT_ENDPOINT": cluster.client_address,
            "RAY_HEAD_NODE_INTERNAL_IP": cluster.client_address,
        }

    def _set(self, name: str, state, uris: dict[str, str] | None = None,
             error: str | None = None):
        def change(resource) -> None:
            resource.state = state
            resource.update_time.CopyFrom(now())
            if state == State.RUNNING and not resource.HasField("start_time"):
                resource.start_time.CopyFrom(now())
            if uris is not None:
                resource.resource_runtime.ClearField("access_uris")
                resource.resource_runtime.access_uris.update(uris)
            if error is not None:
                resource.error.CopyFrom(status_pb2.Status(
                    code=grpc.StatusCode.FAILED_PRECONDITION.value[0], message=error))
        return self.store.update(name, change)

    # -- changing --------------------------------------------------------------------------------

    def update_persistent_resource(self, request, context: grpc.ServicerContext):
        current = self.load(request.persistent_resource.name)
        paths = set(request.update_mask.paths)
        if not paths or not paths <= _UPDATABLE:
            raise invalid(f"update_mask must name some of {sorted(_UPDATABLE)}; got "
                          f"{sorted(paths)}.")
        if current.state != State.RUNNING:
            raise failed_precondition(
                f"{current.name} is {State.Name(current.state)}; only a RUNNING resource can "
                "be updated.")
        wanted = ResourcePb()
        wanted.CopyFrom(current)
        asked = request.persistent_resource
        if paths & {"resource_pools", "resource_pools.replica_count"}:
            by_id = {p.id: p for p in asked.resource_pools}
            if set(by_id) != {p.id for p in current.resource_pools}:
                raise invalid("resource_pools: give every existing pool, by id; pools "
                              "cannot be added or removed.")
            for pool in wanted.resource_pools:
                new = by_id[pool.id]
                if new.HasField("machine_spec") and new.machine_spec != pool.machine_spec:
                    raise invalid(f"resource_pools[{pool.id}].machine_spec is "
                                  "immutable.")
                pool.replica_count = new.replica_count
                if new.HasField("autoscaling_spec"):
                    pool.autoscaling_spec.CopyFrom(new.autoscaling_spec)
        if "labels" in paths:
            wanted.labels.clear()
            wanted.labels.update(asked.labels)
        if "display_name" in paths:
            wanted.display_name = asked.display_name
        self._check(wanted)
        name = current.name

        def change(resource) -> None:
            resource.CopyFrom(wanted)
            resource.state = State.UPDATING
            resource.update_time.CopyFrom(now())

        self.store.update(name, change)
        return self.operations.run(location_of(name), UpdateMetadata(),
                                   lambda: self._rescale(name), f"update-{name}")

    def _rescale(self, name: str):
        resource = self.load(name)
        cluster = self.ray_cluster(name)
        if cluster is not None:
            try:
                cluster.scale(worker_nodes(resource))
            except RayUnavailable as exc:
                self._set(name, State.ERROR, error=str(exc))
                raise failed_precondition(f"{name}: {exc}") from exc
        return self._set(name, State.RUNNING)

    def reboot_persistent_resource(self, request, context: grpc.ServicerContext):
        resource = self.load(request.name)
        name = resource.name
        self._set(name, State.REBOOTING)

        def work():
            uris = self._start_ray(self.load(name))
            return self._set(name, State.RUNNING, uris=uris or None)

        return self.operations.run(location_of(name), RebootMetadata(), work, f"reboot-{name}")

    def delete_persistent_resource(self, request, context: grpc.ServicerContext):
        resource = self.load(request.name)
        name = resource.name
        self._set(name, State.STOPPING)

        def work():
            self._stop(name)
            self.store.delete(name)
            return empty_pb2.Empty()

        return self.operations.run(location_of(name), DeleteMetadata(), work, f"delete-{name}")

    def _stop(self, name: str) -> None:
        with self._lock:
            cluster = self._clusters.pop(name, None)
        if cluster is not None:
            cluster.stop()

    # -- the emulator's life -------------------------------------------------------------------

    def resume(self) -> None:
        """After an emulator restart: an earlier emulator's Ray processes are gone, so Ray
        clusters start again; deletions cut short finish."""
        for resource in self.store.select():
            name = resource.name
            if resource.state == State.STOPPING:
                self.store.delete(name)
            elif resource.state != State.ERROR and resource.resource_runtime_spec.HasField(
                    "ray_spec"):
                self._set(name, State.PROVISIONING)
                threading.Thread(target=self._restart, args=(name,), daemon=True,
                                 name=f"resume-{name}").start()
            elif resource.state != State.ERROR:
                self._set(name, State.RUNNING)

    def _restart(self, name: str) -> None:
        try:
            self._set(name, State.RUNNING, uris=self._start_ray(self.load(name)))
        except Exception as exc:
            log.exception("restarting the Ray cluster of %s failed", name)
            self._set(name, State.ERROR, error=str(exc))

    def shutdown(self) -> None:
        with self._lock:
            self._stopping = True
            clusters = list(self._clusters.values())
            self._clusters.clear()
        for cluster in clusters:
            cluster.stop()

    def close(self) -> None:
        self.store.close()

    def methods(self) -> dict[str, tuple[object, object]]:
        return {
            "CreatePersistentResource": (self.create_persistent_resource, CreateRequest),
            "GetPersistentResource": (self.get_persistent_resource, GetRequest),
            "ListPersistentResources": (self.list_persistent_resources, ListRequest),
            "UpdatePersistentResource": (self.update_persistent_resource, UpdateRequest),
            "DeletePersistentResource": (self.delete_persistent_resource, DeleteRequest),
            "RebootPersistentResource": (self.reboot_persistent_resource, RebootRequest),
        }
