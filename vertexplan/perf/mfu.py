"""Model FLOPs Utilisation: achieved model FLOP/s over the peak of every device the job holds.

    MFU = flops_per_token x tokens_per_s / (peak per device x devices)

tokens_per_s is the step event's global figure (all data-parallel ranks together); the devices
and their kind come from the CustomJob's worker pools, the model's shape and precision from
the run_started event (the job's request supplies the precision when the event does not).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vertexplan.catalog import describe_machine_spec
from vertexplan.perf.flops import ModelShape, flops_per_token, shape_from_event
from vertexplan.perf.peaks import Peak, peak_flops


@dataclass(frozen=True)
class Devices:
    accelerator: str
    count: int


@dataclass(frozen=True)
class MfuBasis:
    """Everything but the throughput: MFU of a step is ``basis.mfu(tokens_per_s)``."""

    shape: ModelShape
    flops_per_token: int
    devices: Devices
    precision: str
    peak: Peak

    @property
    def peak_total(self) -> float:
        return self.peak.flops * self.devices.count

    def mfu(self, tokens_per_s: float | None) -> float | None:
        if tokens_per_s is None or tokens_per_s < 0:
            return None
        return self.flops_per_token * tokens_per_s / self.peak_total

    def describe(self) -> str:
        peak = f"{self.peak.flops / 1e12:g} TFLOP/s {self.peak.precision}"
        out = (f"{self.flops_per_token:,} FLOPs/token (6N + 12LHQT, N={self.shape.params:,}) "
               f"against {self.devices.count} x {self.devices.accelerator} at {peak} "
               f"({self.peak.source}, {self.peak.retrieved})")
        return out + (f"; {self.peak.note}" if self.peak.note else "")


def job_devices(custom_job: Mapping[str, Any] | None) -> Devices | str:
    """Every accelerator the job's worker pools hold, or why they cannot be counted."""
    specs = ((custom_job or {}).get("jobSpec") or {}).get("workerPoolSpecs") or []
    kinds: set[str] = set()
    count = 0
    for spec in specs:
        if not spec:
            continue
        try:
            shape = describe_machine_spec(spec.get("machineSpec") or {})
            replicas = int(spec.get("replicaCount", 1))
        except (ValueError, TypeError) as exc:
            return f"the worker pools cannot be read: {exc}"
        if shape.accelerator_type is None or shape.devices == 0:
            continue  # CPU pools (a reduction server, a parameter server) add no FLOP/s
        kinds.add(shape.accelerator_type)
        count += shape.devices * max(replicas, 0)
    if not kinds or count == 0:
        return "the job has no GPU or TPU: MFU is measured against an accelerator's peak"
    if len(kinds) > 1:
        return f"the worker pools mix accelerators ({', '.join(sorted(kinds))})"
    return Devices(kinds.pop(), count)


def mfu_basis(run_started: Mapping[str, Any] | None, custom_job: Mapping[str, Any] | None,
              precision: str | None) -> MfuBasis | str:
    """The basis of a run's MFU, or a sentence saying why it cannot be computed."""
    if run_started is None:
        return "no run_started event yet: it reports the model's size"
    shape = shape_from_event(run_started)
    if isinstance(shape, str):
        return shape
    devices = job_devices(custom_job)
    if isinstance(devices, str):
        return devices
    precision = run_started.get("precision") or precision
    if not isinstance(precision, str) or not precision:
        return "neither run_started nor the job says the precision (bf16, fp16, fp32)"
    peak = peak_flops(devices.accelerator, precision)
    if isinstance(peak, str):
        return peak
    return MfuBasis(shape, flops_per_token(shape), devices, precision, peak)
