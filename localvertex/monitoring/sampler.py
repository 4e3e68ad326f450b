"""Samples every running replica's process tree (psutil) into the MetricStore: CPU
utilisation (CPU seconds over wall seconds, over the host's cores, as Vertex divides by the
machine's), resident memory in bytes and as a fraction of the host's, and, where its
processes use NVIDIA GPUs, accelerator utilisation and memory (gpus.py).

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

from localvertex.monitoring import gpus, series
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


@dataclass
class Reading:
    cpu_s: float
    rss: int
    started: float
    pids: list[int]


def read_tree(pid: int) -> Reading | None:
    """CPU seconds, resident bytes, start time and pids of a process and its descendants;
    None once it is gone. A descendant that exits between the listing and the read is left
    out."""
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
        started = root.create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None
    reading = Reading(0.0, 0, started, [])
    for proc in procs:
        try:
            times = proc.cpu_times()
            reading.cpu_s += times.user + times.system
            reading.rss += proc.memory_info().rss
            reading.pids.append(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return reading


class Sampler:
    def __init__(self, replicas: ReplicaPids, store: MetricStore, sample_s: float = SAMPLE_S,
                 look_s: float = LOOK_S,
                 read_gpus: Callable[[], gpus.GpuUse | None] = gpus.read) -> None:
        self.replicas = replicas
        self.store = store
        self.read_gpus = read_gpus
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
        due: list[tuple[str, str, str, int]] = []
        wall = time.time()
        for job_id, project, pids in self.replicas():
            for key, pid in pids.items():
                if pid is None:
                    continue
                live.add((job_id, key))
                seen = self._seen.get((job_id, key))
                if seen is None or seen.pid != pid or wall - seen.wall >= self.sample_s:
                    due.append((project, job_id, key, pid))
        for gone in set(self._seen) - live:
            del self._seen[gone]
        # One nvidia-smi reading for the round, and none when nothing is due.
        use = self.read_gpus() if due else None
        return sum(self._sample(*replica, use) for replica in due)

    def _sample(self, project: str, job_id: str, key: str, pid: int,
                use: gpus.GpuUse | None) -> bool:
        wall = time.time()
        reading = read_tree(pid)
        if reading is None:
            return False
        seen = self._seen.get((job_id, key))
        if seen is not None and seen.pid == pid:
            used, elapsed = reading.cpu_s - seen.cpu_s, wall - seen.wall
        else:  # a new process: its average since it started
            used, elapsed = reading.cpu_s, wall - reading.started
        self._seen[(job_id, key)] = _Seen(pid, wall, reading.cpu_s)
        values = {
            series.CPU: max(0.0, used) / max(elapsed, 1e-3) / self.cores,
            series.MEMORY: reading.rss / self.memory_total,
            series.MEMORY_BYTES: float(reading.rss),
        }
        accelerator = use.of(reading.pids) if use is not None else None
        if accelerator is not None:
            values[series.ACCELERATOR], values[series.ACCELERATOR_MEMORY] = accelerator
        self.store.add(project, job_id, key, time.time_ns(), values)
        return True
