"""Properties over generated specs, valid and broken.

Every error must point at a field the spec has, or at the documented position of a missing
required field (so a form can always attach it to an input); validation never raises, never
modifies the spec, gives the same answer twice and the same answer after a JSON round trip.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.vertexplan.catalog.factories import REDUCTION_SERVER, job, machine_spec, pool
from vertexplan.catalog import (
    MISSING_FIELD_PATHS,
    get_catalog,
    is_tpu_pod,
    resolve_path,
    validate_custom_job,
)
from vertexplan.catalog.enums import FLEX_START_ACCELERATORS
from vertexplan.catalog.errors import parent_path, path_template
from vertexplan.catalog.normalize import normalize_custom_job

_catalog = get_catalog()
GPU_SPECS = [
    machine_spec(m, acc, n)
    for m, combos in _catalog.combinations.items()
    for acc, counts in combos.items()
    for n in counts
]
TPU_SPECS = [
    machine_spec(tpu.machine_type, topology=t.topology)
    for tpu in _catalog.tpu_machines.values()
    for t in tpu.topologies
]
CPU_SPECS = [
    machine_spec(m.name)
    for m in _catalog.machines.values()
    if m.accelerators in ("none", "optional")
]

NAMES = [
    *list(_catalog.machines)[:10], "a2-highgpu-3g", "NVIDIA_TESLA_T4", "NVIDIA_L4", "A100",
    "TPU_V3", "2x2", "4x4", "3x3", "SPOT", "FLEX_START", "LOW_COST", "pd-balanced", "pd-ssd",
    "gs://bucket/x", "/gcs/bucket", "172800s", "-1s", "8d", "", "MY-VAR", "Team", REDUCTION_SERVER,
    "projects/my-proj/global/networks/vpc",
]  # fmt: skip
KEYS = [
    "machineType", "acceleratorType", "acceleratorCount", "tpuTopology", "replicaCount",
    "replica_count", "acceleratorCont", "diskSpec", "bootDiskSizeGb", "containerSpec", "imageUri",
    "env", "name", "value", "strategy", "timeout", "maxWaitDuration", "disableRetries",
    "restartJobOnWorkerRestart", "labels", "network", "Bad Key", "a.b", "x[0]", 'q"uote',
]  # fmt: skip

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-3, max_value=20),
    st.sampled_from([0, 1, 2, 3, 4, 8, 16, 50, 100, 64001, 2**40, 1.5, 2.0]),
    st.sampled_from(NAMES),
    st.text(max_size=8),
    st.integers(min_value=-2, max_value=20).map(str),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    ),
    max_leaves=6,
)


@st.composite
def valid_jobs(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(st.sampled_from(["gpu", "tpu", "cpu", "multi"]))
    strategies: list[object] = ["STANDARD", 3]
    if kind == "tpu":
        tpu = copy.deepcopy(draw(st.sampled_from(TPU_SPECS)))
        spec = job(pool(tpu))
        if not is_tpu_pod(tpu["machineType"], tpu["tpuTopology"]):
            strategies.append("SPOT")
    else:
        strategies.append("SPOT")
        specs = CPU_SPECS if kind == "cpu" else GPU_SPECS[:-2]  # GPUs, not cloud-tpu
        machine = draw(st.sampled_from(specs))
        pools = [pool(copy.deepcopy(machine))]
        if kind == "multi":
            pools.append(pool(copy.deepcopy(machine), draw(st.integers(1, 4))))
        if machine.get("acceleratorType") in FLEX_START_ACCELERATORS:
            strategies.append("FLEX_START")
            if kind == "multi" and draw(st.booleans()):
                strategies.remove("FLEX_START")  # FLEX_START needs the same machine everywhere
                pools.append(pool(machine_spec("n1-highcpu-16"), "2", image=REDUCTION_SERVER))
        spec = job(*pools)
    spec["jobSpec"]["scheduling"] = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "strategy": st.sampled_from(strategies),
                "timeout": st.sampled_from(["3600s", "604800s", "86400.5s"]),
                "restartJobOnWorkerRestart": st.booleans(),
            },
        )
    )
    return spec


def _slots(node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key or index) in a JSON document."""
    found: list[tuple[Any, Any]] = []
    if isinstance(node, dict):
        for key, value in node.items():
            found.append((node, key))
            found.extend(_slots(value))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found.append((node, index))
            found.extend(_slots(value))
    return found


@st.composite
def mutated_jobs(draw: st.DrawFn) -> dict[str, Any]:
    spec = draw(valid_jobs())
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        slots = _slots(spec)
        container, key = draw(st.sampled_from(slots))
        action = draw(st.sampled_from(["delete", "replace", "add"]))
        if action == "delete":
            del container[key]
        elif action == "replace":
            container[key] = draw(values)
        elif isinstance(container, dict):
            container[draw(st.sampled_from(KEYS))] = draw(values)
        else:
            container.append(draw(values))
    return spec


def _assert_paths_resolve(spec: dict[str, Any]) -> None:
    errors = validate_custom_job(spec)
    # Paths name the fields as Vertex reads them: a single pool mapping as workerPoolSpecs[0].
    spec, _ = normalize_custom_job(spec)
    for error in errors:
        found, _ = resolve_path(spec, error.path)
        if found:
            continue
        assert path_template(error.path) in MISSING_FIELD_PATHS, error
        holder, value = resolve_path(spec, parent_path(error.path))
        assert holder and isinstance(value, dict), error


SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(valid_jobs())
def test_generated_valid_jobs_are_accepted(spec: dict[str, Any]) -> None:
    assert validate_custom_job(spec) == []
    assert validate_custom_job(spec) == []


@SETTINGS
@given(mutated_jobs())
def test_every_error_points_at_a_field_or_a_documented_missing_one(spec: dict[str, Any]) -> None:
    before = copy.deepcopy(spec)
    errors = validate_custom_job(spec)
    assert spec == before, "validation modified the job"
    assert validate_custom_job(spec) == errors
    assert validate_custom_job(json.loads(json.dumps(spec))) == errors
    assert all(e.message and isinstance(e.suggestions, tuple) for e in errors)
    _assert_paths_resolve(spec)


@SETTINGS
@given(values)
def test_anything_at_all_is_answered_not_raised(value: Any) -> None:
    errors = validate_custom_job(value)
    assert errors
    for error in errors:
        found, _ = resolve_path(value, error.path)
        assert found or path_template(error.path) in MISSING_FIELD_PATHS
