"""The composer refuses a request key it does not read, at every level, on the key's own path
with the nearest valid name: nothing a user wrote is silently dropped."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.vertexplan.composer.helpers import A100_8, compose_request, job
from vertexplan import presets
from vertexplan.composer import keys
from vertexplan.composer.request import PERSISTENT_DISK_WORDS

FULL: dict[str, Any] = job(
    strategy="zero2", precision="bf16", chief=dict(A100_8),
    workers={"replica_count": 1, "reservation": {"type": "ANY_RESERVATION"}},
    nfs_mounts=[{"server": "10.0.0.2", "path": "/share", "mount_point": "data"}],
    batch={"global_batch_size": 64}, model={"parameters": 1_000_000_000},
    deepspeed={"zero": {"overlap_comm": True}, "scheduler": {"type": "WarmupLR"}},
    job_spec_extra={"persistentResourceId": "pool-1"},
)


@pytest.mark.parametrize(("request_", "path", "meant"), [
    (job(useSpot=True), "useSpot", "scheduling_strategy"),
    (job(chief={"machine_type": "n1-standard-4", "use_spot": True}), "chief.use_spot",
     "scheduling_strategy"),
    (job(chief={"machine_type": "n1-standard-4", "machineType": "n1-standard-8"}),
     "chief.machineType", "machine_type"),
    (job(workers={"replica_count": 2, "gpu_count": 8}), "workers.gpu_count",
     "accelerator_count"),
    (job(chief={"machine_type": "n1-standard-4",
                "reservation": {"type": "ANY_RESERVATION", "name": "r"}}),
     "chief.reservation.name", "values"),
    (job(nfs_mounts=[{"server": "s", "path": "/p", "mountPoint": "d"}]),
     "nfs_mounts[0].mountPoint", "mount_point"),
    (job(strategy="zero2", chief=dict(A100_8), deepspeed={"zero": {"stage": 3}}),
     "deepspeed.zero.stage", "strategy"),
    (job(model={"parameters": 10, "num_layers": 4}), "model.num_layers", "layers"),
    (job(job_spec_extra={"persistent_resource_id": "p"}),
     "job_spec_extra.persistent_resource_id", "persistentResourceId"),
    (job(job_spec_extra={"serviceAccount": "sa@p.iam.gserviceaccount.com"}),
     "job_spec_extra.serviceAccount", "service_account"),
    (job(recovery={"strategy": "failover", "max_retries": 2}), "recovery.max_retries",
     "max_recoveries"),
])
def test_an_unknown_key_is_refused_on_its_path_with_the_name_meant(
        request_: dict[str, Any], path: str, meant: str) -> None:
    result = compose_request(request_)
    assert not result.ok
    assert path in result.errors, result.errors
    assert f"did you mean {meant}" in " ".join(result.errors[path])
    assert result.suggestions[path] == (meant,)


def test_spot_asked_for_by_an_unknown_name_is_never_composed_as_standard_and_valid() -> None:
    result = compose_request(job(chief={"machine_type": "n1-standard-4", "useSpot": True}))
    assert not result.ok
    assert "scheduling_strategy: SPOT" in result.errors["chief.useSpot"][0]


def test_every_known_section_composes_without_unknown_key_errors() -> None:
    result = compose_request(FULL)
    assert not list(keys.unknown(FULL))
    assert not any("would be" in m for ms in result.errors.values() for m in ms), result.errors


def test_the_presets_use_only_known_keys() -> None:
    for preset in presets.PRESETS:
        assert list(keys.unknown(preset.job_request())) == [], preset.slug


def _sections(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The paths of every object in ``value`` whose keys the schema names (not free maps)."""
    out = []
    shape: Any = keys.SCHEMA
    for part in path:
        shape = shape[0] if isinstance(part, int) else shape[part]
    if isinstance(value, dict) and isinstance(shape, dict):
        out.append(path)
        for key, sub in value.items():
            out += _sections(sub, (*path, key))
    elif isinstance(value, list) and isinstance(shape, list):
        for i, sub in enumerate(value):
            out += _sections(sub, (*path, i))
    return out


SECTIONS = _sections(FULL)
NAMES = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ_", min_size=1, max_size=20)


@settings(max_examples=60, deadline=None)
@given(where=st.sampled_from(SECTIONS), key=NAMES)
def test_any_unknown_key_anywhere_is_refused(where: tuple[Any, ...], key: str) -> None:
    request = copy.deepcopy(FULL)
    node: Any = request
    for part in where:
        node = node[part]
    if key in node or key in PERSISTENT_DISK_WORDS:
        return  # a persistent disk has its own answer (tests/compose)
    node[key] = True
    result = compose_request(request)
    path = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in (*where, key))
    assert path.lstrip(".") in result.errors, (path, result.errors)
