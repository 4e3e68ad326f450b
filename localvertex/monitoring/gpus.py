"""What the host's NVIDIA GPUs say about the replicas' processes, from `nvidia-smi` (one call
for the GPUs and one for their processes, per sampling round): a replica's accelerator
utilisation is that of the GPUs its processes use (nvidia-smi gives no per-process figure
without pmon's sampling), its accelerator memory what its processes hold of those GPUs'.

No nvidia-smi, or one that fails or sees none of a replica's processes (a container whose pid
namespace hides them): no accelerator series, as a CPU machine on Vertex has none.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

GPU_QUERY = ["--query-gpu=uuid,utilization.gpu,memory.total", "--format=csv,noheader,nounits"]
APP_QUERY = ["--query-compute-apps=pid,gpu_uuid,used_memory",
             "--format=csv,noheader,nounits"]
TIMEOUT_S = 5.0


@dataclass
class GpuUse:
    # GPU uuid -> (utilisation 0..1, memory in MiB)
    gpus: dict[str, tuple[float, float]] = field(default_factory=dict)
    # pid -> [(GPU uuid, MiB it holds there)]
    apps: dict[int, list[tuple[str, float]]] = field(default_factory=dict)

    def of(self, pids: Iterable[int]) -> tuple[float, float] | None:
        """(utilisation, memory share) of the GPUs these processes use; None if they use none."""
        held: dict[str, float] = {}
        for pid in pids:
            for uuid, mib in self.apps.get(pid, ()):
                if uuid in self.gpus:
                    held[uuid] = held.get(uuid, 0.0) + mib
        if not held:
            return None
        utilisation = sum(self.gpus[u][0] for u in held) / len(held)
        total = sum(self.gpus[u][1] for u in held)
        return utilisation, (sum(held.values()) / total if total else 0.0)


def _rows(text: str, width: int) -> list[list[str]]:
    rows = [[cell.strip() for cell in line.split(",")] for line in text.splitlines()]
    return [row for row in rows if len(row) == width]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:  # "[N/A]", "[Not Supported]"
        return None


def parse(gpu_csv: str, app_csv: str) -> GpuUse:
    use = GpuUse()
    for uuid, util, total in _rows(gpu_csv, 3):
        utilisation, memory = _number(util), _number(total)
        if memory is not None:
            use.gpus[uuid] = ((utilisation or 0.0) / 100, memory)
    for pid, uuid, used in _rows(app_csv, 3):
        mib = _number(used)
        if pid.isdigit() and mib is not None:
            use.apps.setdefault(int(pid), []).append((uuid, mib))
    return use


def read() -> GpuUse | None:
    """The host's GPUs and their processes now; None without nvidia-smi or when it fails."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    try:
        gpus = subprocess.run([smi, *GPU_QUERY], capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=True).stdout
        apps = subprocess.run([smi, *APP_QUERY], capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=True).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("nvidia-smi failed: %s", exc)
        return None
    return parse(gpus, apps)
