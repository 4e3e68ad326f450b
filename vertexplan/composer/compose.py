"""A job request -> its Vertex CustomJob (REST JSON), validated by Vertex's own rules.

The request is read once (``JobRequest``, request.py); each stage then takes what it needs
from it, in this order, and hands on what it found:

    keys.py         every key the composer does not read, on its own path
    hardware.py     the pools' machines, disks and replicas; the topology
    parallelism.py  what the chief runs, the strategy's arguments, environment and configs
    tracking.py     the TensorBoard and Experiment fields
    build.py        the CustomJob
    checks.py       the request's own rules (strategy on hardware, labels, environment ...)
    the catalogue   Vertex's rules on the CustomJob
    planning.py     the memory plan, the modelled step time, the strategy's hints
    paths.py        every finding on the request field that caused it
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vertexplan import memory
from vertexplan.catalog.errors import FieldError
from vertexplan.catalog.lookups import UnknownRegionError
from vertexplan.catalog.validate import validate_custom_job
from vertexplan.composer.build import build
from vertexplan.composer.checks import request_findings
from vertexplan.composer.defaults import DEFAULTS
from vertexplan.composer.hardware import read_hardware
from vertexplan.composer.keys import unknown
from vertexplan.composer.parallelism import launch
from vertexplan.composer.paths import Finding, place
from vertexplan.composer.planning import plan_for
from vertexplan.composer.request import JobRequest
from vertexplan.composer.tracking import read_tracking
from vertexplan.perf.expected_step import ExpectedStep


@dataclass
class Composition:
    custom_job: dict[str, Any]
    request: JobRequest  # as composed: what a job stores (to_dict)
    # Keyed by request field path ("chief.accelerator_count"); "" for the job as a whole.
    errors: dict[str, list[str]] = field(default_factory=dict)
    world_size: int = 1  # devices the model is spread over (GPUs, TPU chips)
    processes: int = 1  # trainer processes: world_size on GPUs, one per VM on a TPU slice
    warnings: dict[str, list[str]] = field(default_factory=dict)
    suggestions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    hints: list[str] = field(default_factory=list)
    memory_plan: memory.MemoryPlan | None = None
    # A step's modelled time (with a memory plan), or why it cannot be modelled.
    expected_step: ExpectedStep | str | None = None
    deepspeed_config: dict[str, Any] | None = None
    fsdp_config: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return not self.errors


def compose(request: JobRequest, *, memory_policy: str = "refuse") -> Composition:
    """Build the CustomJob for a job request and validate it. Pure: a request that names no
    image runs ``DEFAULTS``'s.

    ``memory_policy``: "refuse" makes a job that does not fit in memory an error, "warn" a
    warning (a team's setting).
    """
    found: list[Finding | FieldError] = [Finding(*f) for f in unknown(request.document)]
    found += [Finding(key, message) for key, messages in request.problems.items()
              for message in messages]
    hardware = read_hardware(request)
    launched = launch(request, hardware.topology)
    found += [Finding(key, message, launched.suggestions.get(key, ()))
              for key, messages in launched.errors.items() for message in messages]
    built = build(request, hardware, launched, read_tracking(request),
                  default_image=DEFAULTS.image_for)
    errors, warnings = request_findings(request, built)
    found += [Finding(*f) for f in errors]
    try:
        found += validate_custom_job(built.custom_job, request.region)
    except UnknownRegionError as exc:
        found.append(Finding("region", f"region {request.region!r} is not a Vertex training "
                             "region in the catalogue", tuple(exc.suggestions)))
    found += [Finding(*f, warning=True) for f in warnings]
    planned = plan_for(request, built)
    found += [Finding(key, message) for key, messages in planned.errors.items()
              for message in messages]
    found += [Finding(key, message, planned.suggestions.get(key, ()),
                      warning=memory_policy == "warn")
              for key, messages in planned.overflows.items() for message in messages]
    found += [Finding(key, message, warning=True) for key, messages in planned.warnings.items()
              for message in messages]
    placed = place(found, request, built.custom_job)
    return Composition(
        custom_job=built.custom_job, request=request, errors=placed.errors,
        world_size=hardware.topology.world_size, processes=hardware.topology.processes,
        warnings=placed.warnings,
        suggestions=placed.suggestions, hints=planned.hints, memory_plan=planned.plan,
        expected_step=planned.expected_step, deepspeed_config=launched.deepspeed,
        fsdp_config=launched.fsdp)
