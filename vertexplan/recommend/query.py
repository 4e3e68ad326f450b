"""What the recommender is asked and what it answers: the query, its workload, the results.

How long a configuration takes:

- ``hours``: the same wall-clock hours on every configuration (a fixed-time run);
- ``steps`` x ``step_time_s`` measured on ``reference_devices`` devices of ``reference_device``:
  each configuration's step time is the reference step time x reference (devices x peak TFLOPS)
  / (configuration (devices x peak TFLOPS) x scaling efficiency), peak figures from
  ``vertexplan.recommend.throughput``. The scaling efficiency discounts a configuration of
  several nodes by the network between them (``vertexplan.perf.scaling``: 1 on one node,
  1 / (1 + penalty x (nodes - 1)) with a penalty per machine series, smallest for GPUDirect
  machines and TPU slices); the reference is taken as one node. Within a node, and against the
  reference device, speed is still taken as proportional to peak TFLOPS: real jobs reach a
  different share of peak on each device and lose more to ZeRO-3/FSDP communication, so treat
  the durations as a first approximation, the ranking as a shortlist, and measure a step on the
  chosen configuration before a long run. ``deadline_hours`` drops configurations that would
  take longer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from typing import Any

from vertexplan import memory
from vertexplan.perf.scaling import scaling_efficiency
from vertexplan.pricing import STRATEGY_RATES, Totals
from vertexplan.recommend.hardware import Hardware
from vertexplan.recommend.throughput import PEAK_THROUGHPUT, peak_tflops

SCHEDULES = ("STANDARD", "SPOT", "FLEX_START")
GPU_STRATEGIES = ("ddp", "fsdp", "zero1", "zero2", "zero3")
TPU_STRATEGIES = ("tpu_jax", "tpu_xla")
ANY = "any"
STRATEGY_CHOICES = (ANY, *GPU_STRATEGIES, *TPU_STRATEGIES)
# "any": the GPU strategies in order of how much they communicate.
ANY_ORDER = ("ddp", "zero2", "fsdp", "zero3")
DEFAULT_MAX_NODES = 8
MAX_NODES = 64
DEFAULT_LIMIT = 10
# A timeout with room for start-up, checkpoint restores and restarts beyond the estimate.
TIMEOUT_MARGIN = Fraction(5, 4)


@dataclass(frozen=True)
class Workload:
    """How long the training takes: ``hours`` anywhere, or ``steps`` of ``step_time_s``
    measured on ``reference_devices`` x ``reference_device``."""

    hours: Decimal | None = None
    steps: int | None = None
    step_time_s: Decimal | None = None
    reference_device: str | None = None
    reference_devices: int = 1
    deadline_hours: Decimal | None = None

    def __post_init__(self) -> None:
        if (self.hours is None) == (self.steps is None):
            raise ValueError("give hours, or steps with step_time_s and reference_device")
        if self.steps is not None:
            if self.step_time_s is None or self.reference_device is None:
                raise ValueError("steps need step_time_s and reference_device")
            if peak_tflops(self.reference_device) is None:
                raise ValueError(f"no throughput figure for {self.reference_device!r}; use "
                                 + ", ".join(PEAK_THROUGHPUT))

    def seconds_on(self, hardware: Hardware) -> Fraction | None:
        """Wall-clock seconds on ``hardware``; None for a device without a throughput figure."""
        if self.hours is not None:
            return Fraction(self.hours) * 3600
        assert self.steps is not None and self.step_time_s is not None
        reference = peak_tflops(self.reference_device)
        mine = peak_tflops(hardware.device)
        if reference is None or mine is None:
            return None
        # Several nodes keep only part of their throughput: the network between them decides
        # how much (throughput.scaling_efficiency); the reference is taken as one node.
        efficiency = scaling_efficiency(hardware.series, hardware.nodes, tpu=hardware.is_tpu)
        step = Fraction(self.step_time_s) * reference * self.reference_devices / (
            mine * hardware.devices * efficiency)
        return self.steps * step

    def timeout_hours(self, seconds: Fraction) -> int:
        """The timeout a recommended job gets: the deadline, else the estimate plus a quarter."""
        if self.deadline_hours is not None:
            return math.ceil(self.deadline_hours)
        return max(math.ceil(seconds * TIMEOUT_MARGIN / 3600), 1)


@dataclass(frozen=True)
class Query:
    model: memory.ModelShape | None  # None: memory is not checked (alternatives of a job)
    strategy: str
    region: str
    workload: Workload
    schedules: tuple[str, ...] = SCHEDULES
    max_nodes: int = DEFAULT_MAX_NODES
    limit: int = DEFAULT_LIMIT
    image_uri: str = ""
    command: tuple[str, ...] = ()
    # Only hardware whose aggregate peak TFLOPS lies in [low, high] (the "comparable size" of
    # an alternative); None: any.
    throughput_range: tuple[Fraction, Fraction] | None = None

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGY_CHOICES:
            raise ValueError(f"strategy {self.strategy!r}: use {', '.join(STRATEGY_CHOICES)}")
        unknown = [s for s in self.schedules if s not in SCHEDULES]
        if unknown or not self.schedules:
            raise ValueError(f"schedules {unknown}: use {', '.join(SCHEDULES)}")
        if not 1 <= self.max_nodes <= MAX_NODES:
            raise ValueError(f"max_nodes must be 1 to {MAX_NODES}")

    @property
    def tpu(self) -> bool:
        return self.strategy in TPU_STRATEGIES

    def strategies(self) -> tuple[str, ...]:
        return ANY_ORDER if self.strategy == ANY else (self.strategy,)


@dataclass
class Recommendation:
    hardware: Hardware
    strategy: str
    tpu_sharding: str | None
    scheduling_strategy: str
    seconds: Fraction
    hourly: Totals  # micro-dollars per hour at each rate (None where the rate does not apply)
    totals: Totals  # micro-dollars for the duration at each rate
    memory_plan: memory.MemoryPlan | None
    request: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    rank: int = 0

    @property
    def rate(self) -> str:
        return STRATEGY_RATES[self.scheduling_strategy]

    @property
    def total(self) -> int:
        value = self.totals.get(STRATEGY_RATES[self.scheduling_strategy])  # type: ignore[arg-type]
        assert value is not None
        return value

    @property
    def hours(self) -> Decimal:
        return Decimal(self.seconds.numerator) / Decimal(self.seconds.denominator) / 3600

    @property
    def label(self) -> str:
        sharding = f" ({self.tpu_sharding})" if self.tpu_sharding else ""
        return (f"{self.hardware.describe()}, {self.strategy}{sharding}, "
                f"{self.scheduling_strategy}")

    def sort_key(self) -> tuple[int, int, int, str]:
        return (self.total, self.hardware.devices, SCHEDULES.index(self.scheduling_strategy),
                self.hardware.machine_type)


@dataclass
class Recommendations:
    results: list[Recommendation]
    considered: int  # hardware configurations looked at
    reason: str  # why there are no results ("" when there are)
    assumptions: list[str]
    table_source: str
    table_retrieved: str | None
    rejected: dict[str, int] = field(default_factory=dict)
