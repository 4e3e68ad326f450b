"""The emulator's system metrics: one bounded ring of samples per replica and metric, the
names Vertex publishes them under (VERTEX_FACTS.md A9), and how a sample is kept.

Vertex writes its training metrics to Cloud Monitoring on the monitored resource `cloudml_job`
(labels project_id, job_id, task_name) with the replica in metric labels task_type (the worker
pool, `workerpool0`) and task_index; the same shape here, so a reader written against Google
reads the emulator unchanged. Utilisations are fractions (0..1, CPU may pass 1 on several
cores); memory/bytes_used is bytes.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

PREFIX = "ml.googleapis.com/training/"
CPU = PREFIX + "cpu/utilization"
MEMORY = PREFIX + "memory/utilization"
MEMORY_BYTES = PREFIX + "memory/bytes_used"
ACCELERATOR = PREFIX + "accelerator/utilization"
ACCELERATOR_MEMORY = PREFIX + "accelerator/memory/utilization"
METRICS = (CPU, MEMORY, MEMORY_BYTES, ACCELERATOR, ACCELERATOR_MEMORY)
INT_METRICS = frozenset({MEMORY_BYTES})
RESOURCE_TYPE = "cloudml_job"

# A ring per replica and metric: at one sample per 5 s, an hour of each.
RING = 720
# Replicas kept at most (a finished job's stay until newer ones push them out): the rings'
# memory stays bounded however many jobs ran.
MAX_REPLICAS = 2048


@dataclass
class ReplicaSeries:
    project: str
    job_id: str
    task_name: str                # workerpool0-0
    points: dict[str, deque[tuple[int, float]]] = field(default_factory=dict)
    last_ns: int = 0

    @property
    def task_type(self) -> str:
        return self.task_name.rsplit("-", 1)[0]

    @property
    def task_index(self) -> str:
        tail = self.task_name.rsplit("-", 1)
        return tail[1] if len(tail) == 2 else "0"


class MetricStore:
    """Every replica's rings; safe to write from the sampler and read from RPC threads."""

    def __init__(self, ring: int = RING, max_replicas: int = MAX_REPLICAS) -> None:
        self.ring = ring
        self.max_replicas = max_replicas
        self._series: dict[tuple[str, str], ReplicaSeries] = {}
        self._lock = threading.Lock()

    def add(self, project: str, job_id: str, task_name: str, at_ns: int,
            values: dict[str, float]) -> None:
        with self._lock:
            key = (job_id, task_name)
            series = self._series.get(key)
            if series is None:
                if len(self._series) >= self.max_replicas:
                    oldest = min(self._series, key=lambda k: self._series[k].last_ns)
                    del self._series[oldest]
                series = self._series[key] = ReplicaSeries(project, job_id, task_name)
            for metric, value in values.items():
                series.points.setdefault(metric, deque(maxlen=self.ring)).append((at_ns, value))
            series.last_ns = at_ns

    def snapshot(self, project: str) -> list[tuple[ReplicaSeries, dict[str, list]]]:
        """The project's replicas with a copy of their points (oldest first), by job and task."""
        with self._lock:
            found = [(s, {m: list(p) for m, p in s.points.items()})
                     for s in self._series.values() if s.project == project]
        return sorted(found, key=lambda item: (item[0].job_id, item[0].task_name))
