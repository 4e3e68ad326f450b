"""Rules on the request itself, before or beside Vertex's rules on the CustomJob.

The catalogue judges the CustomJob as Vertex would; these judge what only the request knows:
which strategy runs on which hardware, which labels and environment variables the control plane
writes itself, and requests for things Vertex does not have.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from contract import labels as contract_labels
from vertexplan.catalog.lookups import list_machine_types
from vertexplan.catalog.storage import PERSISTENT_DISK_ANSWER
from vertexplan.composer.build import Built
from vertexplan.composer.hardware import Hardware
from vertexplan.composer.parallelism import (
    GPU_STRATEGIES,
    STRATEGIES,
    TPU_SHARDINGS,
    TPU_STRATEGIES,
)
from vertexplan.composer.request import PERSISTENT_DISK_WORDS, JobRequest
from vertexplan.logparse.frameworks.registry import FRAMEWORKS

Finding = tuple[str, str, tuple[str, ...]]  # (request field, message, suggestions)
RESERVED_LABEL_PREFIX = contract_labels.PREFIX  # cp-job, cp-attempt, cp-team: per attempt
NO_BF16 = ("NVIDIA_TESLA_V100", "NVIDIA_TESLA_T4", "NVIDIA_TESLA_P100", "NVIDIA_TESLA_P4",
           "NVIDIA_TESLA_K80")


def request_findings(request: JobRequest, built: Built) -> tuple[list[Finding], list[Finding]]:
    """(errors, warnings) of the request beside Vertex's rules on its CustomJob."""
    return list(_errors(request, built)), list(_warnings(request))


def _errors(request: JobRequest, built: Built) -> Iterator[Finding]:
    yield from _persistent_disks(request)
    yield from _pool_two(request)
    yield from _labels(request)
    yield from _generated_env(request, built)
    yield from _strategy_hardware(request, built.hardware)
    yield from built.tracking.errors
    yield from _framework(request)
    if request.image_entrypoint and request.command:
        yield ("image_entrypoint", "image_entrypoint runs the image's own ENTRYPOINT, but a "
               "command is given as well: keep one of them", ("false",))


def _warnings(request: JobRequest) -> Iterator[Finding]:
    for role in ("chief", "workers"):
        p = request.pools.get(role)
        acc = p.accelerator_type if p is not None else None
        if request.precision == "bf16" and acc in NO_BF16:
            yield (f"{role}.accelerator_type" if role in request.document else "precision",
                   f"{acc} has no bf16 arithmetic (it came with Ampere): bf16 runs emulated "
                   "and slowly there; use fp16 or fp32, or an A100/L4/H100",
                   ("fp16", "fp32"))


def _framework(request: JobRequest) -> Iterator[Finding]:
    given = request.document.get("framework")
    if given is None or given in FRAMEWORKS:
        return
    names = tuple(sorted(FRAMEWORKS))
    yield ("framework", f"framework {str(given)[:40]!r} is not one the control plane reads: "
           f"one of {', '.join(names)}, or leave it out to tell from the command and the "
           "first lines", names)


def _persistent_disks(request: JobRequest) -> Iterator[Finding]:
    places: list[tuple[str, Mapping[str, Any] | frozenset[str]]] = [("", request.document)]
    places += [(role, p.keys) for role, p in request.given_pools.items()]
    for prefix, where in places:
        for word in PERSISTENT_DISK_WORDS:
            if word in where:  # a plain name: its path needs no quoting
                yield (f"{prefix}.{word}" if prefix else word, f"{word}: {PERSISTENT_DISK_ANSWER}",
                       ("base_output_directory", "nfs_mounts", "boot_disk_size_gb"))


def _pool_two(request: JobRequest) -> Iterator[Finding]:
    if {"reduction_server", "parameter_servers"} <= set(request.given_pools):
        yield ("parameter_servers", "workerPoolSpecs[2] holds either the Reduction Server or "
               "parameter servers, not both: remove one of them",
               ("reduction_server", "parameter_servers"))
    for role in ("reduction_server", "parameter_servers", "evaluators", "workers"):
        if role in request.malformed_pools:
            yield (role, f"{role} must be an object (the pool's machine and replica_count) "
                   "or null for none", ())
    if "chief" in request.malformed_pools:
        yield ("chief", "chief must be an object with at least machine_type", ())


def _labels(request: JobRequest) -> Iterator[Finding]:
    labels = request.labels
    if labels in (None, {}):
        return
    if not isinstance(labels, dict):
        yield ("labels", 'labels must be an object of strings, e.g. {"project": "vlm"}', ())
        return
    for key in labels:
        if isinstance(key, str) and key.startswith(RESERVED_LABEL_PREFIX):
            yield (f'labels["{key}"]', f"label {key!r}: keys starting with "
                   f"{RESERVED_LABEL_PREFIX} are written by the control plane (cp-job, "
                   "cp-attempt, cp-team) on every attempt; choose another key",
                   (key[len(RESERVED_LABEL_PREFIX):] or "project",))


def _generated_env(request: JobRequest, built: Built) -> Iterator[Finding]:
    env = request.env
    if env in (None, {}):
        return
    if not isinstance(env, dict):
        yield ("env", 'env must be an object of NAME: value, e.g. {"NCCL_DEBUG": "INFO"}', ())
        return
    generated = {name for name, _ in built.launch.env}
    for name in env:
        if name in generated:
            yield ("env", f"env {name} is written by the composer for strategy "
                   f"{request.strategy}: remove it and set the strategy's "
                   "options instead", ())
    total = len(env) + len(generated)
    if generated and total > 100 >= len(env):
        yield ("env", f"env has {len(env)} variables and the strategy adds {len(generated)}: "
               "Vertex takes at most 100 in all", ())


def _strategy_hardware(request: JobRequest, hardware: Hardware) -> Iterator[Finding]:
    strategy = request.strategy
    if strategy not in STRATEGIES:
        return
    machine = request.pools["chief"].machine_type
    tpu = hardware.chief_tpu
    if tpu and strategy not in TPU_STRATEGIES:
        yield ("strategy", f"{strategy} runs on GPUs and CPUs; {machine} is a TPU machine: "
               "use tpu_jax (JAX) or tpu_xla (PyTorch/XLA)", TPU_STRATEGIES)
    elif strategy in TPU_STRATEGIES and hardware.chief_known and not tpu:
        tpus = tuple(m.name for m in list_machine_types(kind="tpu"))
        yield ("strategy", f"{strategy} needs a TPU machine in the chief pool, and "
               f"{machine} has none: choose one of {', '.join(tpus[:4])}, or strategy ddp, "
               "fsdp or zero1-3 for GPUs", GPU_STRATEGIES)
    tpu_section = request.tpu
    if isinstance(tpu_section, dict) and tpu_section.get("sharding") not in (
            None, "", *TPU_SHARDINGS):
        yield ("tpu.sharding", f"tpu.sharding {tpu_section.get('sharding')!r}: use "
               f"{' or '.join(TPU_SHARDINGS)}", TPU_SHARDINGS)
