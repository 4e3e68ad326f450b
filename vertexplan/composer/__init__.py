"""Job request -> a Vertex CustomJob (REST JSON), validated by Vertex's own rules.

A *job request* is what a user fills in (the compose form, the same fields as JSON through the
API, or an imported CustomJob read back into them; see ``request.py`` for its fields). The
composer turns it into the CustomJob that will be submitted, with the strategy's launcher
arguments, environment and DeepSpeed/FSDP configuration (``vertexplan.composer.parallelism``), runs
the catalogue's validation on that CustomJob and its own rules on the request, maps every error back
to the request field that caused it, and plans the job's per-device memory.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vertexplan import memory
from vertexplan.catalog import FieldError, UnknownRegionError, validate_custom_job
from vertexplan.composer import checks, keys, planning
from vertexplan.composer.build import build
from vertexplan.composer.parallelism import (
    BUILTIN_COMMANDS,
    DEFAULT_TRAINER_ARGS,
    STRATEGIES,
    TRAINER_COMMAND,
)
from vertexplan.composer.paths import anchor, custom_job_path_for, request_field_for
from vertexplan.composer.request import POOL_FIELDS, POOL_ROLES, normalize
from vertexplan.perf.expected_step import ExpectedStep

__all__ = [
    "BUILTIN_COMMANDS",
    "DEFAULT_TRAINER_ARGS",
    "POOL_FIELDS",
    "POOL_ROLES",
    "STRATEGIES",
    "TRAINER_COMMAND",
    "Composition",
    "compose",
    "custom_job_path_for",
    "for_attempt",
    "normalize",
    "request_field_for",
    "with_env",
    "with_suggestions",
]

MEMORY_POLICIES = ("refuse", "warn")


@dataclass
class Composition:
    custom_job: dict[str, Any]
    # Keyed by request field path ("chief.accelerator_count"); "" for the job as a whole.
    errors: dict[str, list[str]] = field(default_factory=dict)
    world_size: int = 1
    warnings: dict[str, list[str]] = field(default_factory=dict)
    suggestions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    hints: list[str] = field(default_factory=list)
    memory_plan: memory.MemoryPlan | None = None
    # A step's modelled time (with a memory plan), or why it cannot be modelled.
    expected_step: ExpectedStep | str | None = None
    deepspeed_config: dict[str, Any] | None = None
    fsdp_config: dict[str, Any] | None = None
    # The request as composed: older spellings replaced (what a job stores).
    request: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors

    def add(self, key: str, message: str, suggestions: tuple[str, ...] = (), *,
            warning: bool = False) -> None:
        target = self.warnings if warning else self.errors
        if message not in target.get(key, []):
            target.setdefault(key, []).append(message)
        if suggestions and key not in self.suggestions:
            self.suggestions[key] = tuple(suggestions)


DEFAULT_IMAGE = "us-central1-docker.pkg.dev/local-project/training/trainers:0.1.0"
# The TPU strategies' images (Dockerfile.tpu-jax and Dockerfile.tpu-xla at the repository root).
# Our own builds: Google lists no prebuilt training containers for v5e, and the URIs of prebuilt
# JAX and PyTorch/XLA ones are UNCONFIRMED (VERTEX_FACTS.md A5).
DEFAULT_TPU_IMAGES = {
    "tpu_jax": "us-central1-docker.pkg.dev/local-project/training/trainers-tpu-jax:0.1.0",
    "tpu_xla": "us-central1-docker.pkg.dev/local-project/training/trainers-tpu-xla:0.1.0",
}


@dataclass
class Defaults:
    """Where a request that names no region runs, and the image a pool that names none runs.

    Providers, read at each call: the control plane connects its settings here at start
    (controlplane/core/apps.py), so a changed setting applies at once; plain Python callers
    get these values."""

    region: Callable[[], str] = lambda: "us-central1"
    image: Callable[[], str] = lambda: DEFAULT_IMAGE
    tpu_images: Callable[[], dict[str, str]] = lambda: DEFAULT_TPU_IMAGES

    def image_for(self, strategy: Any) -> str:
        """The image a job of ``strategy`` runs when it names none: the TPU strategies' own
        images, the PyTorch image otherwise."""
        return self.tpu_images().get(strategy) or self.image()


DEFAULTS = Defaults()


def compose(request: dict[str, Any], *, memory_policy: str = "refuse") -> Composition:
    """Build the CustomJob for a job request and validate it. Pure: the defaults of a request
    that names no region or image come from ``DEFAULTS``.

    ``memory_policy``: "refuse" makes a job that does not fit in memory an error, "warn" a
    warning (a team's setting).
    """
    request, legacy_errors = normalize(request)
    region = request.get("region") or DEFAULTS.region()
    built = build(request, region=region, default_image=DEFAULTS.image_for)
    composition = Composition(custom_job=built.custom_job, world_size=built.topology.world_size,
                              request=request, deepspeed_config=built.launch.deepspeed,
                              fsdp_config=built.launch.fsdp)

    def add(key: str, message: str, suggestions: tuple[str, ...] = (), *,
            warning: bool = False) -> None:
        composition.add(anchor(key, request), message, suggestions, warning=warning)

    for key, message, suggestions in keys.unknown(request):
        add(key, message, suggestions)
    for key, messages in legacy_errors.items():
        for message in messages:
            add(key, message)
    for key, messages in built.launch.errors.items():
        for message in messages:
            add(key, message, built.launch.suggestions.get(key, ()))
    for key, message, suggestions in checks.errors(request, built):
        add(key, message, suggestions)
    try:
        found = validate_custom_job(built.custom_job, region)
    except UnknownRegionError as exc:
        found = []
        add("region", f"region {region!r} is not a Vertex training region in the catalogue",
            exc.suggestions)
    for err in found:
        key = request_field_for(err.path, request, built.custom_job)
        add(key, with_suggestions(err), err.suggestions)
    for key, message, suggestions in checks.warnings(request, built):
        add(key, message, suggestions, warning=True)

    planned = planning.plan_for(request, built)
    for key, messages in planned.errors.items():
        for message in messages:
            add(key, message)
    warn = memory_policy == "warn"
    for key, messages in planned.overflows.items():
        for message in messages:
            add(key, message, planned.suggestions.get(key, ()), warning=warn)
    for key, messages in planned.warnings.items():
        for message in messages:
            add(key, message, warning=True)
    composition.memory_plan = planned.plan
    composition.expected_step = planned.expected_step
    composition.hints = planning.strategy_hints(request, built, planned.plan)
    return composition


def with_suggestions(err: FieldError) -> str:
    if not err.suggestions or any(s in err.message for s in err.suggestions):
        return err.message
    return f"{err.message} (valid: {', '.join(err.suggestions)})"


def for_attempt(custom_job: dict[str, Any], *, display_name: str, labels: dict[str, str],
                output_uri: str) -> dict[str, Any]:
    """The CustomJob of one attempt: deterministic display name, labels and output folder.

    The user's own labels are kept beside the control plane's; a base_output_directory the
    user chose is kept (every attempt shares it, so a new attempt resumes from its
    checkpoints), otherwise the job's folder under CP_OUTPUT_URI is used.
    """
    job = {**custom_job, "displayName": display_name,
           "labels": {**(custom_job.get("labels") or {}), **labels}}
    spec = dict(custom_job["jobSpec"])
    spec.setdefault("baseOutputDirectory", {"outputUriPrefix": output_uri})
    job["jobSpec"] = spec
    return job


def with_env(custom_job: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    """A copy of the CustomJob in which every pool's container (or Python package) also has
    the variables of `env` that it does not set itself: what a user wrote wins."""
    if not env:
        return custom_job
    job = copy.deepcopy(custom_job)
    for pool in (job.get("jobSpec") or {}).get("workerPoolSpecs") or []:
        runs = (pool or {}).get("containerSpec") or (pool or {}).get("pythonPackageSpec")
        if not runs:
            continue
        own = list(runs.get("env") or [])
        taken = {entry.get("name") for entry in own}
        runs["env"] = own + [{"name": name, "value": value} for name, value in env.items()
                             if name not in taken]
    return job
