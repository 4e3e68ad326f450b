"""Persistent resources through Google's PersistentResourceServiceClient, and Ray's Job
Submission REST API at the resource's RAY_DASHBOARD_URI over plain HTTP (no `ray` import).

As serving.py: the same class talks to Google or the emulator by settings alone; operations
are returned, not waited for. On Google the dashboard is reached over TLS with an ADC bearer
token (VERTEX_FACTS.md A2, "Jobs API"); on the emulator over plain HTTP on 127.0.0.1 with the
cluster's Ray token (Ray's token authentication), which the control plane derives from the
emulator's token and the cluster's name and dashboard (localvertex/auth.py).
"""

from __future__ import annotations

from typing import Any

import google.auth
import google.auth.transport.requests
import httpx
from django.conf import settings
from google.api_core import exceptions as gexc
from google.cloud import aiplatform_v1
from google.cloud.aiplatform_v1.services.persistent_resource_service.transports import (
    PersistentResourceServiceGrpcTransport,
)
from google.protobuf import field_mask_pb2, json_format

from controlplane.backends import clients, errors
from controlplane.backends.clusters_base import ClusterBackend, RayJobStatus, RemoteCluster
from controlplane.backends.serving import _done, _operation
from controlplane.backends.training import translated_errors
from localvertex import auth

RAY_HTTP_TIMEOUT_S = 30.0


def _remote(resource: aiplatform_v1.PersistentResource) -> RemoteCluster:
    return RemoteCluster(
        name=resource.name,
        state=aiplatform_v1.PersistentResource.State(resource.state).name,
        replicas={p.id: int(p.replica_count) for p in resource.resource_pools},
        access_uris=dict(resource.resource_runtime.access_uris),
        error_message=resource.error.message,
    )


class VertexClusters(ClusterBackend):
    def __init__(self) -> None:
        self.project = settings.VERTEX_PROJECT
        self.region = settings.VERTEX_REGION
        self.timeout = settings.VERTEX_RPC_TIMEOUT_S
        self.emulated = bool(settings.VERTEX_EMULATOR_ADDR)
        # The emulator's clusters by dashboard address: their Ray tokens name them.
        self._by_dashboard: dict[str, str] = {}
        self.client = clients.google_client(aiplatform_v1.PersistentResourceServiceClient,
                                            PersistentResourceServiceGrpcTransport,
                                            clients.emulator_channel())

    @property
    def parent(self) -> str:
        return f"projects/{self.project}/locations/{self.region}"

    def resource_name(self, resource_id: str) -> str:
        return f"{self.parent}/persistentResources/{resource_id}"

    def _call(self, what: str, fn, **kwargs: Any):
        with translated_errors(what):
            return fn(retry=None, timeout=self.timeout, **kwargs)

    def create(self, resource_id: str, resource: dict[str, Any]):
        pb = aiplatform_v1.PersistentResource.pb()()
        json_format.ParseDict(resource, pb)
        try:
            with translated_errors("CreatePersistentResource"):
                op = self.client.create_persistent_resource(
                    request={"parent": self.parent, "persistent_resource_id": resource_id,
                             "persistent_resource": aiplatform_v1.PersistentResource.wrap(pb)},
                    retry=None, timeout=self.timeout)
        except errors.BackendError as exc:
            if isinstance(exc.__cause__, gexc.AlreadyExists):
                return _done(self.resource_name(resource_id))  # an earlier try created it
            raise
        return _operation(op)

    def get(self, name: str) -> RemoteCluster:
        return _remote(self._call("GetPersistentResource",
                                  self.client.get_persistent_resource, name=name))

    def set_replicas(self, name: str, pools: list[dict[str, Any]]):
        resource = aiplatform_v1.PersistentResource.pb()()
        json_format.ParseDict({"name": name, "resourcePools": pools}, resource)
        op = self._call("UpdatePersistentResource", self.client.update_persistent_resource,
                        persistent_resource=aiplatform_v1.PersistentResource.wrap(resource),
                        update_mask=field_mask_pb2.FieldMask(paths=["resource_pools"]))
        return _operation(op)

    def delete(self, name: str):
        try:
            op = self._call("DeletePersistentResource",
                            self.client.delete_persistent_resource, name=name)
        except errors.NotFound:
            return _done(name)  # already gone: what a retried delete finds
        return _operation(op)

    def get_operation(self, name: str):
        return _operation(self._call("GetOperation", self.client.get_operation,
                                     request={"name": name}))

    # -- Ray's Job Submission API ----------------------------------------------------------------

    def _ray(self, dashboard: str) -> httpx.Client:
        if self.emulated:
            token = auth.ray_token(settings.VERTEX_EMULATOR_TOKEN, self._named(dashboard),
                                   dashboard)
            return httpx.Client(base_url=f"http://{dashboard}", timeout=RAY_HTTP_TIMEOUT_S,
                                headers={"Authorization": f"Bearer {token}"})
        credentials, _ = google.auth.default(
            scopes=["https://www.googleapis.com/auth/cloud-platform"])
        credentials.refresh(google.auth.transport.requests.Request())
        return httpx.Client(base_url=f"https://{dashboard}", timeout=RAY_HTTP_TIMEOUT_S,
                            headers={"Authorization": f"Bearer {credentials.token}"})

    def _named(self, dashboard: str) -> str:
        """The name of the emulator's cluster whose dashboard is at DASHBOARD ("" if none)."""
        if dashboard not in self._by_dashboard:
            for resource in self._call("ListPersistentResources",
                                       self.client.list_persistent_resources,
                                       parent=self.parent):
                uri = resource.resource_runtime.access_uris.get("RAY_DASHBOARD_URI")
                if uri:
                    self._by_dashboard[uri] = resource.name
        return self._by_dashboard.get(dashboard, "")

    def _request(self, dashboard: str, method: str, path: str, *, raw: bool = False,
                 **kwargs: Any) -> httpx.Response:
        try:
            with self._ray(dashboard) as http:
                response = http.request(method, path, **kwargs)
            if response.status_code in (401, 403) and self._by_dashboard.pop(dashboard, None):
                # The address is another cluster's now (a reboot moved the one we knew).
                with self._ray(dashboard) as http:
                    response = http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise errors.TransientBackendError(f"Ray {method} {path}: {exc}") from exc
        if raw:
            return response
        if response.status_code == 404:
            raise errors.NotFound(f"Ray {method} {path}: not found")
        if response.status_code >= 500:
            raise errors.TransientBackendError(
                f"Ray {method} {path}: {response.status_code} {response.text[:300]}")
        return response

    def submit_ray_job(self, dashboard, submission_id, entrypoint, runtime_env, metadata,
                       entrypoint_num_cpus=None) -> str:
        body: dict[str, Any] = {"entrypoint": entrypoint, "submission_id": submission_id,
                                "runtime_env": runtime_env, "metadata": metadata}
        if entrypoint_num_cpus is not None:
            body["entrypoint_num_cpus"] = entrypoint_num_cpus
        response = self._request(dashboard, "POST", "/api/jobs/", raw=True, json=body)
        if response.status_code < 400:
            return response.json().get("submission_id", submission_id)
        # Ray answers a known submission id with a 500 that says so: an earlier try's job.
        if "already exists" in response.text:
            return submission_id
        if response.status_code >= 500:
            raise errors.TransientBackendError(
                f"Ray POST /api/jobs/: {response.status_code} {response.text[-300:]}")
        raise errors.InvalidJobSpec(f"Ray refused the job: {response.text[:500]}")

    def ray_job(self, dashboard, submission_id) -> RayJobStatus:
        body = self._request(dashboard, "GET", f"/api/jobs/{submission_id}").json()
        return RayJobStatus(submission_id, body.get("status", ""), body.get("message") or "")

    def stop_ray_job(self, dashboard, submission_id) -> bool:
        response = self._request(dashboard, "POST", f"/api/jobs/{submission_id}/stop")
        return bool(response.status_code < 400 and response.json().get("stopped"))

    def ray_job_logs(self, dashboard, submission_id) -> str:
        return self._request(dashboard, "GET", f"/api/jobs/{submission_id}/logs").json().get(
            "logs", "")
