"""Samples every running replica's process tree (psutil) into the MetricStore: CPU
utilisation (CPU seconds over wall seconds, over the host's cores, as Vertex divides by the
machine's), resident memory in bytes and as a fraction of the host's.

One thread for the whole emulator. It looks for new replicas every LOOK_S, so a replica has a
sample within a second of starting (its first: its average since it started), and samples
each one again every SAMPLE_S: a bounded rate, however many jobs run. Synthetic replicas have
no process (pid None) and are not sampled.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import psutil

from localvertex.monitoring import series
from localvertex.monitoring.series import MetricStore

log = logging.getLogger(__name__)

SAMPLE_S = 5.0
LOOK_S = 1.0

# (job id, project, replica key -> pid or None) of every job whose runner is live.
ReplicaPids = Callable[[], list[tuple[str, str, dict[str, int | None]]]]


@dataclass
class _Seen:
    pid: int
    wall: float
    cpu_s: float


def read_tree(pid: int) -> tuple[float, int, float] | None:
    """(CPU seconds, resident bytes, start time) of a process and its descendants; None once
    it is gone. A descendant that exits between the listing and the read is left out."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
        started = root.create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None
    cpu_s, rss = 0.0, 0
    for proc in procs:
        try:
            times = proc.cpu_times()
            cpu_s += times.user + times.system
            rss += proc.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return cpu_s, rss, started


class Sampler:
    def __init__(self, replicas: ReplicaPids, store: MetricStore, sample_s: float = SAMPLE_S,
                 look_s: float = LOOK_S) -> None:
        self.replicas = replicas
        self.store = store
        self.sample_s = sample_s
        self.look_s = look_s
        self.cores = psutil.cpu_count() or 1
        self.memory_total = psutil.virtual_memory().total
        self._seen: dict[tuple[str, str], _Seen] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="metrics-sampler", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)

    def _run(self) -> None:
        while not self._stop.wait(self.look_s):
            try:
                self.sample()
            except Exception:  # a sampler that dies would leave every chart empty
                log.exception("sampling replica metrics failed")

    def sample(self) -> int:
        """Sample the replicas that are due; how many were sampled."""
        live: set[tuple[str, str]] = set()
        sampled = 0
        for job_id, project, pids in self.replicas():
            for key, pid in pids.items():
                if pid is None:
                    continue
                live.add((job_id, key))
                if self._sample(project, job_id, key, pid):
                    sampled += 1
        for gone in set(self._seen) - live:
            del self._seen[gone]
        return sampled

    def _sample(self, project: str, job_id: str, key: str, pid: int) -> bool:
        wall = time.time()
        seen = self._seen.get((job_id, key))
        if seen is not None and seen.pid == pid and wall - seen.wall < self.sample_s:
            return False
        reading = read_tree(pid)
        if reading is None:
            return False
        cpu_s, rss, started = reading
        if seen is not None and seen.pid == pid:
            used, elapsed = cpu_s - seen.cpu_s, wall - seen.wall
        else:  # a new process: its average since it started
            used, elapsed = cpu_s, wall - started
        cpu = max(0.0, used) / max(elapsed, 1e-3) / self.cores
        self._seen[(job_id, key)] = _Seen(pid, wall, cpu_s)
        self.store.add(project, job_id, key, time.time_ns(), {
            series.CPU: cpu,
            series.MEMORY: rss / self.memory_total,
            series.MEMORY_BYTES: float(rss),
        })
        return True
