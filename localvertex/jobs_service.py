"""google.cloud.aiplatform.v1.JobService: the CustomJob methods."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
import time

import grpc
from google.cloud import aiplatform_v1
from google.longrunning import operations_pb2
from google.protobuf import empty_pb2

from localvertex.core.errors import failed_precondition, invalid, not_found
from localvertex.core.filters import FilterError
from localvertex.core.timeutil import to_timestamp
from localvertex.job_capacity import check_quota
from localvertex.jobfilter import compile_job_filter
from localvertex.jobstore import CustomJobPb, JobRecord, JobState
from localvertex.manager import JobManager
from localvertex.replicas.environment import ENV_XLA_PYTHON, tpu_slice_chips, xla_python

SERVICE = "google.cloud.aiplatform.v1.JobService"

CreateCustomJobRequest = aiplatform_v1.CreateCustomJobRequest.pb()
GetCustomJobRequest = aiplatform_v1.GetCustomJobRequest.pb()
ListCustomJobsRequest = aiplatform_v1.ListCustomJobsRequest.pb()
ListCustomJobsResponse = aiplatform_v1.ListCustomJobsResponse.pb()
CancelCustomJobRequest = aiplatform_v1.CancelCustomJobRequest.pb()
DeleteCustomJobRequest = aiplatform_v1.DeleteCustomJobRequest.pb()
DeleteOperationMetadata = aiplatform_v1.DeleteOperationMetadata.pb()

_PARENT = re.compile(r"^projects/([^/]+)/locations/([^/]+)$")
_NAME = re.compile(r"^projects/([^/]+)/locations/([^/]+)/customJobs/([^/]+)$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DEFAULT_PAGE_SIZE = 100
_MAX_PAGE_SIZE = 1000
_MAX_POOLS = 4
PJRT_DEVICE = "PJRT_DEVICE"  # PyTorch/XLA's runtime device


def _label_key_ok(key: str) -> bool:
    return (
        0 < len(key) <= 63
        and key[0].isalpha()
        and key[0].islower()
        and all((ch.isalnum() and not ch.isupper()) or ch in "_-" for ch in key)
    )


def _label_value_ok(value: str) -> bool:
    return len(value) <= 63 and all(
        (ch.isalnum() and not ch.isupper()) or ch in "_-" for ch in value
    )


def validate_custom_job(job: CustomJobPb) -> None:  # type: ignore[valid-type]
    """The checks Vertex makes that a local run depends on; raises INVALID_ARGUMENT."""
    if not job.display_name:
        raise invalid("custom_job.display_name is required.")
    if len(job.display_name) > 128:
        raise invalid("custom_job.display_name must be at most 128 characters.")
    _check_labels(job.labels)
    pools = job.job_spec.worker_pool_specs
    if not pools:
        raise invalid("custom_job.job_spec.worker_pool_specs is required.")
    if len(pools) > _MAX_POOLS:
        raise invalid(
            f"custom_job.job_spec.worker_pool_specs has {len(pools)} pools; at most 4."
        )
    for i, pool in enumerate(pools):
        if i > 0 and pool.replica_count == 0:
            continue  # a placeholder keeping the pools' positions
        _check_pool(i, pool)


def _check_labels(labels) -> None:
    if len(labels) > 64:
        raise invalid("custom_job.labels can have at most 64 entries.")
    for key, value in labels.items():
        if not _label_key_ok(key):
            raise invalid(
                f"custom_job.labels: invalid key {key!r} (lowercase letters, digits, '_' and '-',"
                " starting with a letter, at most 63 characters)."
            )
        if not _label_value_ok(value):
            raise invalid(
                f"custom_job.labels[{key!r}]: invalid value {value!r} (lowercase letters, digits,"
                " '_' and '-', at most 63 characters)."
            )


def _check_pool(i: int, pool) -> None:
    """One non-empty WorkerPoolSpec (aiplatform.v1 protobuf), the `i`th of the job."""
    where = f"custom_job.job_spec.worker_pool_specs[{i}]"
    if i == 0 and pool.replica_count != 1:
        raise invalid(f"{where}.replica_count must be 1 for the primary worker pool.")
    if pool.replica_count < 0:
        raise invalid(f"{where}.replica_count must not be negative.")
    if not pool.machine_spec.machine_type:
        raise invalid(f"{where}.machine_spec.machine_type is required.")
    env = _checked_task(where, pool).env
    if len(env) > 100:
        raise invalid(f"{where}: at most 100 environment variables.")
    for var in env:
        if not _ENV_NAME.match(var.name):
            raise invalid(f"{where}: invalid environment variable name {var.name!r}.")
    _check_tpu_runtime(where, pool, env)


def _check_tpu_runtime(where: str, pool, env) -> None:
    """A TPU slice is played on the CPU (environment.tpu_env); PyTorch/XLA (PJRT_DEVICE=TPU)
    gets the CPU PJRT device in its own environment (torch_xla pins its torch). Without that
    environment the job is refused with what to do (INVALID_ARGUMENT, as Vertex answers a spec
    it cannot run: the control plane fails the job at once with this message)."""
    if tpu_slice_chips(pool.machine_spec) is None:
        return
    python = xla_python()
    if any(var.name == PJRT_DEVICE and var.value == "TPU" for var in env) and not python.exists():
        raise invalid(
            f"{where}: PyTorch/XLA on a TPU ({PJRT_DEVICE}=TPU) runs on this emulator in the "
            f"PyTorch/XLA environment, and there is none at {python}: build it with `make "
            f"xla-env` (or name its python in {ENV_XLA_PYTHON}), or use strategy "
            "tpu_jax (python -m trainers.jax)."
        )


def _checked_task(where: str, pool):
    """The pool's container_spec or python_package_spec, once it has what a local run needs."""
    task = pool.WhichOneof("task")
    if task == "container_spec":
        spec = pool.container_spec
        if not spec.image_uri:
            raise invalid(f"{where}.container_spec.image_uri is required.")
        if not spec.command and not spec.args:
            raise invalid(
                f"{where}.container_spec.command is required by the local emulator, which"
                " cannot run an image's entrypoint."
            )
        return spec
    if task == "python_package_spec":
        spec = pool.python_package_spec
        if not spec.executor_image_uri:
            raise invalid(f"{where}.python_package_spec.executor_image_uri is required.")
        if not spec.python_module:
            raise invalid(f"{where}.python_package_spec.python_module is required.")
        return spec
    raise invalid(f"{where}: container_spec or python_package_spec is required.")


def _parse_parent(parent: str) -> tuple[str, str]:
    m = _PARENT.match(parent)
    if not m:
        raise invalid(f"parent {parent!r} is not projects/PROJECT/locations/LOCATION.")
    return m.group(1), m.group(2)


class JobService:
    def __init__(self, manager: JobManager) -> None:
        self.manager = manager
        self.jobs = manager.jobs
        self._admit = threading.Lock()

    def _load(self, name: str) -> JobRecord:
        m = _NAME.match(name)
        if not m:
            raise invalid(
                f"name {name!r} is not projects/PROJECT/locations/LOCATION/customJobs/ID."
            )
        record = self.jobs.get(m.group(3))
        if record is None or (record.project, record.location) != (m.group(1), m.group(2)):
            raise not_found(f'CustomJob "{name}" not found.')
        return record

    def create_custom_job(self, request, context: grpc.ServicerContext):
        project, location = _parse_parent(request.parent)
        job = CustomJobPb()
        job.CopyFrom(request.custom_job)
        validate_custom_job(job)
        # Output-only fields are the service's to set.
        for output_field in (
            "name",
            "state",
            "create_time",
            "start_time",
            "end_time",
            "update_time",
            "error",
            "web_access_uris",
        ):
            job.ClearField(output_field)
        if job.job_spec.persistent_resource_id:
            check_persistent_resource(
                self.manager.persistent_resource(
                    f"{request.parent}/persistentResources/"
                    f"{job.job_spec.persistent_resource_id}"), job)
        with self._admit:  # the quota check and the insert, one create at a time
            check_quota(self.manager.capacity, self.jobs, project, location, job)
            job_id = self.jobs.next_id()
            now = to_timestamp(time.time_ns())
            job.name = f"{request.parent}/customJobs/{job_id}"
            job.state = JobState.JOB_STATE_QUEUED
            job.create_time.CopyFrom(now)
            job.update_time.CopyFrom(now)
            self.jobs.insert(JobRecord(id=job_id, project=project, location=location, job=job))
        self.manager.start(job_id)
        return job

    def get_custom_job(self, request, context: grpc.ServicerContext):
        return self._load(request.name).job

    def list_custom_jobs(self, request, context: grpc.ServicerContext):
        project, location = _parse_parent(request.parent)
        try:
            predicate = compile_job_filter(request.filter)
        except FilterError as exc:
            raise invalid(f"Invalid filter: {exc}") from exc
        query_key = hashlib.sha256(f"{request.parent}\n{request.filter}".encode()).hexdigest()[:16]
        after = None
        if request.page_token:
            after = _decode_token(request.page_token, query_key)
        size = request.page_size if request.page_size > 0 else _DEFAULT_PAGE_SIZE
        size = min(size, _MAX_PAGE_SIZE)
        response = ListCustomJobsResponse()
        records = [
            r
            for r in self.jobs.list(project, location)
            if (after is None or int(r.id) < after) and predicate(r.job)
        ]
        for record in records[:size]:
            response.custom_jobs.append(record.job)
        if len(records) > size:
            response.next_page_token = _encode_token(int(records[size - 1].id), query_key)
        return response

    def cancel_custom_job(self, request, context: grpc.ServicerContext):
        record = self._load(request.name)

        def to_cancelling(r: JobRecord) -> None:
            if r.terminal:
                raise failed_precondition(
                    f"CustomJob {request.name} is in state {JobState(r.state).name}"
                    " and cannot be cancelled."
                )
            if r.state != JobState.JOB_STATE_CANCELLING:
                r.job.state = JobState.JOB_STATE_CANCELLING
                r.job.update_time.CopyFrom(to_timestamp(time.time_ns()))

        self.jobs.update(record.id, to_cancelling)
        self.manager.cancel(record.id)
        return empty_pb2.Empty()

    def delete_custom_job(self, request, context: grpc.ServicerContext):
        record = self._load(request.name)
        if not record.terminal:
            raise failed_precondition(
                f"CustomJob {request.name} is in state {JobState(record.state).name}; only a"
                " finished job can be deleted. Cancel it first."
            )
        self.jobs.delete(record.id)
        now = to_timestamp(time.time_ns())
        metadata = DeleteOperationMetadata()
        metadata.generic_metadata.create_time.CopyFrom(now)
        metadata.generic_metadata.update_time.CopyFrom(now)
        operation = operations_pb2.Operation(
            name=f"projects/{record.project}/locations/{record.location}/operations/"
            f"{self.jobs.next_id()}",
            done=True,
        )
        operation.metadata.Pack(metadata)
        operation.response.Pack(empty_pb2.Empty())
        return operation

    def methods(self) -> dict[str, tuple[object, object]]:
        """gRPC method name -> (handler, request message class)."""
        return {
            "CreateCustomJob": (self.create_custom_job, CreateCustomJobRequest),
            "GetCustomJob": (self.get_custom_job, GetCustomJobRequest),
            "ListCustomJobs": (self.list_custom_jobs, ListCustomJobsRequest),
            "CancelCustomJob": (self.cancel_custom_job, CancelCustomJobRequest),
            "DeleteCustomJob": (self.delete_custom_job, DeleteCustomJobRequest),
        }


def _encode_token(after_id: int, query_key: str) -> str:
    raw = json.dumps({"a": after_id, "q": query_key}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_token(token: str, query_key: str) -> int:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        after, key = int(data["a"]), data["q"]
    except (ValueError, KeyError, TypeError) as exc:
        raise invalid("Invalid page_token.") from exc
    if key != query_key:
        raise invalid("page_token does not match the request's parent and filter.")
    return after


def check_persistent_resource(resource, job) -> None:
    """What Vertex asks of a CustomJob on a persistent resource (VERTEX_FACTS.md A2): the
    resource is RUNNING, and each worker pool's machine and disk type equal one of its pools'
    with no more replicas than that pool has (or may scale to)."""
    name = job.job_spec.persistent_resource_id
    if resource is None:
        raise failed_precondition(
            f"PersistentResource {name} does not exist or is not RUNNING.")
    for index, pool in enumerate(job.job_spec.worker_pool_specs):
        if not pool.replica_count:
            continue
        fits = [p for p in resource.resource_pools
                if p.machine_spec.machine_type == pool.machine_spec.machine_type
                and p.machine_spec.accelerator_type == pool.machine_spec.accelerator_type
                and p.machine_spec.accelerator_count == pool.machine_spec.accelerator_count
                and (not pool.disk_spec.boot_disk_type or not p.disk_spec.boot_disk_type
                     or p.disk_spec.boot_disk_type == pool.disk_spec.boot_disk_type)]
        room = max((max(p.replica_count, p.autoscaling_spec.max_replica_count) for p in fits),
                   default=0)
        if not fits or pool.replica_count > room:
            raise invalid(
                f"job_spec.worker_pool_specs[{index}]: {pool.replica_count} x "
                f"{pool.machine_spec.machine_type} does not fit persistent resource {name}: "
                "its machine, accelerators and disk type must equal one of the resource's "
                "pools, with at most that pool's replicas.")
