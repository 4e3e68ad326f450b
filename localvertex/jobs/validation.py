"""The checks Vertex makes on a CustomJob that a local run depends on, answered as Vertex answers
them (INVALID_ARGUMENT, or FAILED_PRECONDITION for a persistent resource that is not running).
A tuning job's trial spec passes the same checks (tuning/service.py)."""

from __future__ import annotations

import re

from contract import labels as contract_labels
from localvertex.core.errors import failed_precondition, invalid
from localvertex.jobs.store import CustomJobPb
from localvertex.replicas.environment import (
    ENV_XLA_PYTHON,
    PJRT_DEVICE,
    tpu_slice_chips,
    xla_python,
)

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_MAX_POOLS = 4


def validate_custom_job(job: CustomJobPb) -> None:  # type: ignore[valid-type]
    """The checks Vertex makes that a local run depends on; raises INVALID_ARGUMENT."""
    if not job.display_name:
        raise invalid("custom_job.display_name is required.")
    if len(job.display_name) > 128:
        raise invalid("custom_job.display_name must be at most 128 characters.")
    check_labels(job.labels)
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


def check_labels(labels) -> None:
    """Vertex's rules on labels (contract/labels.py, as the control plane checks them before
    it submits): at most 64 entries, keys and values of at most 64 lowercase letters
    (international ones too), digits, '_' and '-', a key starting with a letter."""
    if len(labels) > contract_labels.MAX_LABELS:
        raise invalid(f"custom_job.labels can have at most {contract_labels.MAX_LABELS} "
                      "entries.")
    for key, value in labels.items():
        problem = contract_labels.label_problem(key, key=True)
        if problem:
            raise invalid(f"custom_job.labels: invalid key {key!r}: {problem}.")
        problem = contract_labels.label_problem(value, key=False)
        if problem:
            raise invalid(f"custom_job.labels[{key!r}]: invalid value {value!r}: {problem}.")


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
