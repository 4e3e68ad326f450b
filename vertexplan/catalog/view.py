"""A read-only, parsed view of a CustomJob that the rules share.

The view is built leniently from whatever was given: a field of the wrong type reads as
"present but unusable" (``Field.bad``), never as an exception. The rule that owns a field reports
why it is unusable; every other rule skips what it cannot read, so one mistake gives one error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vertexplan.catalog.enums import strategy_name
from vertexplan.catalog.errors import child, item
from vertexplan.catalog.lookups import ACCELERATOR_UNSPECIFIED, accelerator_name, get_machine_type
from vertexplan.catalog.records import MachineType
from vertexplan.catalog.values import as_int

POOLS_PATH = "jobSpec.workerPoolSpecs"


@dataclass(frozen=True)
class Field:
    """One field: where it is, whether it was given, its raw and its parsed value."""

    path: str
    present: bool = False
    raw: Any = None
    value: Any = None  # parsed; None when absent or unusable

    @property
    def bad(self) -> bool:
        return self.present and self.value is None


def read(
    parent: object, parent_path: str, key: str, parse: Callable[[Any], Any] = lambda v: v
) -> Field:
    """Read ``key`` of ``parent``; JSON null counts as absent, as in proto3 JSON."""
    path = child(parent_path, key)
    if not isinstance(parent, dict) or parent.get(key) is None:
        return Field(path)
    raw = parent[key]
    return Field(path, True, raw, parse(raw))


def as_dict(value: object) -> dict | None:
    return value if isinstance(value, dict) else None


def as_str(value: object) -> str | None:
    return value if isinstance(value, str) else None


@dataclass(frozen=True)
class PoolView:
    index: int
    path: str
    raw: Any
    machine_spec: Field
    machine_type: Field  # value: the name as given (a str)
    accelerator_type: Field  # value: enum name; ACCELERATOR_TYPE_UNSPECIFIED reads as absent
    accelerator_count: Field  # value: int; 0, the proto default, means none
    tpu_topology: Field
    replica_count: Field  # value: int
    container_spec: Field
    python_package_spec: Field
    disk_spec: Field

    @property
    def is_object(self) -> bool:
        return isinstance(self.raw, dict)

    @property
    def is_empty(self) -> bool:
        """An empty placeholder ``{}``: allowed for pools after the first."""
        return self.raw == {}

    @property
    def machine(self) -> MachineType | None:
        """The catalogue entry for the machine type, None when absent or unknown."""
        name = self.machine_type.value
        return get_machine_type(name) if isinstance(name, str) else None

    @property
    def task(self) -> Field:
        """The container or Python package spec, whichever is given (container first)."""
        return self.container_spec if self.container_spec.present else self.python_package_spec

    @property
    def image_uri(self) -> str | None:
        spec = self.task.value
        if not isinstance(spec, dict):
            return None
        key = "imageUri" if self.task is self.container_spec else "executorImageUri"
        value = spec.get(key)
        return value if isinstance(value, str) else None

    @property
    def image_uri_path(self) -> str:
        key = "imageUri" if self.task is self.container_spec else "executorImageUri"
        return child(self.task.path, key)

    @property
    def accelerators_requested(self) -> int:
        """Accelerators asked for (0 when none or unreadable)."""
        count = self.accelerator_count.value
        return count if isinstance(count, int) and count > 0 else 0

    @property
    def has_accelerators(self) -> bool:
        return self.accelerator_type.value is not None or self.accelerators_requested > 0

    @property
    def accelerators_readable(self) -> bool:
        """False when an accelerator field is unusable: skip checks that combine them."""
        return not (self.accelerator_type.bad or self.accelerator_count.bad)


def _read_pool(index: int, raw: object) -> PoolView:
    path = item(POOLS_PATH, index)
    pool = raw if isinstance(raw, dict) else None
    machine_spec = read(pool, path, "machineSpec", as_dict)
    spec = machine_spec.value
    acc_type = read(spec, machine_spec.path, "acceleratorType", accelerator_name)
    if acc_type.value == ACCELERATOR_UNSPECIFIED:
        acc_type = Field(acc_type.path)  # the enum's zero: no accelerator, as if left out
    acc_count = read(spec, machine_spec.path, "acceleratorCount", lambda v: as_int(v, bits=32))
    return PoolView(
        index=index,
        path=path,
        raw=raw,
        machine_spec=machine_spec,
        machine_type=read(spec, machine_spec.path, "machineType", as_str),
        accelerator_type=acc_type,
        accelerator_count=acc_count,
        tpu_topology=read(spec, machine_spec.path, "tpuTopology", as_str),
        replica_count=read(pool, path, "replicaCount", as_int),
        container_spec=read(pool, path, "containerSpec", as_dict),
        python_package_spec=read(pool, path, "pythonPackageSpec", as_dict),
        disk_spec=read(pool, path, "diskSpec", as_dict),
    )


@dataclass(frozen=True)
class JobView:
    job: Any
    region: str | None
    job_spec: Field
    pools_field: Field
    pools: tuple[PoolView, ...] = field(default=())
    scheduling: Field = field(default_factory=lambda: Field("jobSpec.scheduling"))

    @property
    def active_pools(self) -> tuple[PoolView, ...]:
        """Pools that describe machines: objects that are not empty placeholders."""
        return tuple(p for p in self.pools if p.is_object and not p.is_empty)

    def scheduling_field(self, key: str, parse: Callable[[Any], Any] = lambda v: v) -> Field:
        return read(self.scheduling.value, self.scheduling.path, key, parse)

    @property
    def strategy(self) -> str | None:
        """The scheduling strategy's name when readable (numbers mapped to names), else None."""
        raw = self.scheduling_field("strategy").raw
        return strategy_name(raw) if raw is not None else None


def build_view(job: object, region: str | None = None) -> JobView:
    job_spec = read(job, "", "jobSpec", as_dict)
    pools_field = read(
        job_spec.value, "jobSpec", "workerPoolSpecs", lambda v: v if isinstance(v, list) else None
    )
    pools = tuple(_read_pool(i, raw) for i, raw in enumerate(pools_field.value or ()))
    return JobView(
        job=job,
        region=region,
        job_spec=job_spec,
        pools_field=pools_field,
        pools=pools,
        scheduling=read(job_spec.value, "jobSpec", "scheduling", as_dict),
    )
