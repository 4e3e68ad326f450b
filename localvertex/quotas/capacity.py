"""What the emulated project may run, per region: accelerator quotas (enforced at
CreateCustomJob as Google enforces them) and injected stockouts (no machines free).

Quotas follow Vertex AI's metric names: `aiplatform.googleapis.com/custom_model_training_{s}`
for on-demand, `..._preemptible_{s}` for SPOT and FLEX_START, with a `region` dimension. A metric
with no limit set is unlimited here. Usage is what the region's unfinished jobs hold.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass

from contract import quota_metrics
from contract.quota_metrics import metric_for

# The metrics are the contract's (contract/quota_metrics.py): the emulator enforces the very
# quotas the control plane reads and plans with.
SERVICE_NAME = quota_metrics.SERVICE


def quota_id_for(metric: str) -> str:
    """CustomModelTrainingNvidiaT4GpusPerProjectPerRegion, from the metric's name."""
    name = metric.rsplit("/", 1)[-1]
    return "".join(part.capitalize() for part in name.split("_")) + "PerProjectPerRegion"


@dataclass(frozen=True)
class Need:
    metric: str
    count: int


def needs(pools: Iterable[tuple[str, int, int]], scheduling: str) -> dict[str, int]:
    """Accelerators a job holds, by metric: pools as (accelerator type, count, replicas)."""
    total: dict[str, int] = {}
    for accelerator, count, replicas in pools:
        metric = metric_for(accelerator, scheduling)
        if metric is not None and count > 0 and replicas > 0:
            total[metric] = total.get(metric, 0) + count * replicas
    return total


@dataclass(frozen=True)
class Shortfall:
    metric: str
    region: str
    limit: int
    usage: int
    requested: int


class Capacity:
    """Quota limits and armed stockouts; thread-safe (the admin service changes them)."""

    def __init__(self, limits: dict[tuple[str, str], int] | None = None) -> None:
        # (metric, region) -> limit; region "" = every region without its own value.
        self._limits: dict[tuple[str, str], int] = dict(limits or {})
        # (region, scheduling) -> stockouts still to inject; scheduling "" = any.
        self._stockouts: dict[tuple[str, str], int] = {}
        self._lock = threading.Lock()

    # -- quotas ------------------------------------------------------------------------------

    def set_limit(self, metric: str, region: str, limit: int) -> None:
        if limit < 0:
            raise ValueError("a quota limit is not negative")
        with self._lock:
            self._limits[(metric, region)] = limit

    def limit(self, metric: str, region: str) -> int | None:
        with self._lock:
            found = self._limits.get((metric, region))
            return found if found is not None else self._limits.get((metric, ""))

    def limits(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self._limits)

    def shortfall(self, region: str, wanted: dict[str, int],
                  used: dict[str, int]) -> Shortfall | None:
        """The first metric `wanted` would take past its limit, given what is `used`."""
        for metric, count in sorted(wanted.items()):
            limit = self.limit(metric, region)
            if limit is not None and used.get(metric, 0) + count > limit:
                return Shortfall(metric, region, limit, used.get(metric, 0), count)
        return None

    # -- stockouts ----------------------------------------------------------------------------

    def arm_stockouts(self, region: str, count: int, scheduling: str = "") -> int:
        if count < 0:
            raise ValueError("count must not be negative")
        with self._lock:
            key = (region, scheduling)
            self._stockouts[key] = self._stockouts.get(key, 0) + count
            return self._stockouts[key]

    def take_stockout(self, region: str, scheduling: str) -> bool:
        """Whether the job starting now in `region` on `scheduling` finds no capacity (each
        armed stockout is used once)."""
        with self._lock:
            for key in ((region, scheduling), (region, "")):
                if self._stockouts.get(key, 0) > 0:
                    self._stockouts[key] -= 1
                    return True
            return False

    def stockouts(self) -> dict[str, int]:
        with self._lock:
            return {f"{r}/{s or '*'}": n for (r, s), n in self._stockouts.items() if n}


def parse_limit(text: str) -> tuple[str, str, int]:
    """`--quota` values: METRIC[@REGION]=N, the metric's short name allowed
    (custom_model_training_nvidia_t4_gpus@us-central1=4)."""
    name, sep, value = text.partition("=")
    if not sep:
        raise ValueError(f"{text!r}: expected METRIC[@REGION]=N")
    metric, _, region = name.partition("@")
    if "/" not in metric:
        metric = f"{SERVICE_NAME}/{metric}"
    try:
        limit = int(value)
    except ValueError as exc:
        raise ValueError(f"{text!r}: the limit must be a whole number") from exc
    if limit < 0:
        raise ValueError(f"{text!r}: the limit must not be negative")
    return metric, region, limit
