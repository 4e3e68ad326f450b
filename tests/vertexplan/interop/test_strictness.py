"""Strict like Vertex: an unknown key anywhere in a CustomJob is refused on its own path with the
nearest valid name; and every job the composer writes is one aiplatform_v1 parses with
unknown fields refused (the presets and generated compositions)."""

from __future__ import annotations

import copy
import string
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.cloud import aiplatform_v1
from google.protobuf import json_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.vertexplan.composer.helpers import compose_request
from vertexplan import interop, presets
from vertexplan.catalog import schema, validate_custom_job
from vertexplan.catalog.errors import child, item

CORPUS = Path(__file__).parent / "corpus"
PRESET_JOBS = [compose_request(p.job_request()).custom_job for p in presets.PRESETS]
CORPUS_JOBS = [interop.import_text(p.read_text(), region="us-central1", filename=p.name)
               .custom_job for p in sorted(CORPUS.iterdir())
               if p.suffix in (".yaml", ".json", ".py") and not p.name.startswith("invalid_")]


def message_nodes(message: str, obj: Any, path: str) -> Iterator[tuple[str, str, dict]]:
    """(message name, path, object) of every object of a known message in a job."""
    if not isinstance(obj, dict):
        return
    yield message, path, obj
    for key, value in obj.items():
        kind = schema.field_kind(message, key)
        if kind is None or kind == schema.SCALAR or kind in schema.MAP_KINDS:
            continue
        if kind.startswith(schema.LIST_OF):
            for i, entry in enumerate(value if isinstance(value, list) else ()):
                yield from message_nodes(kind.removeprefix(schema.LIST_OF), entry,
                                         item(child(path, key), i))
        else:
            yield from message_nodes(kind, value, child(path, key))


def is_unknown(message: str, key: str) -> bool:
    return schema.field_kind(message, key) is None


keys = st.text(alphabet=string.ascii_letters + "_", min_size=1, max_size=20)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(job_index=st.integers(min_value=0), node_index=st.integers(min_value=0), key=keys,
       value=st.one_of(st.booleans(), st.integers(), st.text(max_size=5)))
def test_an_unknown_key_anywhere_is_refused_on_its_path(job_index: int, node_index: int,
                                                        key: str, value: Any) -> None:
    jobs = PRESET_JOBS + CORPUS_JOBS
    job = copy.deepcopy(jobs[job_index % len(jobs)])
    nodes = list(message_nodes("CustomJob", job, ""))
    message, path, node = nodes[node_index % len(nodes)]
    if not is_unknown(message, key):
        return
    node[key] = value
    errors = validate_custom_job(job, "us-central1")
    hits = [e for e in errors if e.path == child(path, key)]
    assert hits, (message, path, key, errors)
    assert "did you mean" in hits[0].message and hits[0].suggestions
    assert hits[0].suggestions[0] in schema.MESSAGES[message] or "." in hits[0].suggestions[0]
    # Import keeps it where the rules see it, never drops it.
    imported = interop.to_request(job, region="us-central1")
    assert any(p == child(path, key) for p in (
        e.path for e in validate_custom_job(imported.custom_job, "us-central1")))


def parses_strictly(custom_job: dict[str, Any]) -> None:
    message = aiplatform_v1.CustomJob.pb(aiplatform_v1.CustomJob())
    json_format.ParseDict(custom_job, message, ignore_unknown_fields=False)


def test_every_preset_parses_into_aiplatform_v1_with_unknown_fields_refused() -> None:
    for custom_job in PRESET_JOBS:
        parses_strictly(custom_job)


GPU_MACHINES = [
    {"machine_type": "n1-standard-8", "accelerator_type": "NVIDIA_TESLA_T4",
     "accelerator_count": 2},
    {"machine_type": "g2-standard-8", "accelerator_type": "NVIDIA_L4", "accelerator_count": 1},
    {"machine_type": "a2-highgpu-8g", "accelerator_type": "NVIDIA_TESLA_A100",
     "accelerator_count": 8},
    {"machine_type": "a3-highgpu-8g", "accelerator_type": "NVIDIA_H100_80GB",
     "accelerator_count": 8, "gpu_partition_size": "1g.10gb"},
    {"machine_type": "n1-standard-4"},
]
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    chief = dict(draw(st.sampled_from(GPU_MACHINES)))
    if draw(st.booleans()):
        chief["reservation"] = {"type": draw(st.sampled_from(
            ["NO_RESERVATION", "ANY_RESERVATION"]))}
    request: dict[str, Any] = {
        "name": "generated", "region": "us-central1",
        "strategy": draw(st.sampled_from(["ddp", "fsdp", "zero2"])),
        "chief": chief,
        "scheduling_strategy": draw(st.sampled_from(["STANDARD", "SPOT", "FLEX_START"])),
        "timeout_hours": draw(st.sampled_from([1, 0.5, 24, 0.0001])),
        "env": draw(st.dictionaries(st.from_regex(r"[A-Z][A-Z0-9_]{0,8}", fullmatch=True),
                                    texts, max_size=3)),
        "args": draw(st.lists(texts, max_size=3)),
        "labels": draw(st.dictionaries(st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True),
                                       st.from_regex(r"[a-z0-9_-]{0,8}", fullmatch=True),
                                       max_size=2)),
    }
    if draw(st.booleans()):
        request["workers"] = {"replica_count": draw(st.integers(min_value=1, max_value=3))}
    if draw(st.booleans()):
        request["python_package"] = {
            "executor_image_uri": "us-docker.pkg.dev/vertex-ai/training/pytorch-gpu.2-4.py310:"
                                  "latest",
            "package_uris": ["gs://b/trainer-0.1.tar.gz"], "python_module": "trainer.task"}
    return request


def strict_parse_of_accepted(generated: st.SearchStrategy[dict[str, Any]]) -> tuple[int, int]:
    """(compositions tried, compositions accepted), every accepted one parsed strictly; an
    AssertionError when fewer than half were accepted: a property over the accepted ones
    proves nothing when the generator makes only jobs the composer refuses."""
    tried: list[dict[str, Any]] = []
    accepted: list[dict[str, Any]] = []

    @settings(max_examples=150, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(request=generated)
    def composes(request: dict[str, Any]) -> None:
        composed = compose_request(request)
        tried.append(request)
        if composed.ok:
            parses_strictly(composed.custom_job)
            accepted.append(request)

    composes()
    assert len(accepted) * 2 >= len(tried) > 0, (
        f"the composer accepted {len(accepted)} of {len(tried)} generated requests")
    return len(tried), len(accepted)


def test_every_composition_the_composer_accepts_parses_strictly() -> None:
    tried, accepted = strict_parse_of_accepted(requests())
    assert accepted >= 50, (tried, accepted)


def test_the_strict_parse_fails_when_the_composer_accepts_nothing() -> None:
    refused = requests().map(lambda request: {**request, "strategy": "zero9"})
    with pytest.raises(AssertionError, match="accepted 0 of"):
        strict_parse_of_accepted(refused)
