"""The emulator's metrics sampler on real processes (a replica and the child it starts):
figures for the whole process tree, one sample per SAMPLE_S, nothing for a process that is
gone; and nvidia-smi's answers (as it prints them) turned into a replica's accelerator
figures: no GPU machine runs these tests, so the GPU side is nvidia-smi's text."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from localvertex.monitoring import gpus, series
from localvertex.monitoring.sampler import Sampler, read_tree
from localvertex.monitoring.series import MetricStore
from tests.localvertex.helpers import wait_for

# A parent holding 32 MiB that starts a child, both then sleeping.
TREE = (
    "import subprocess, sys, time\n"
    "block = bytearray(32 * 2**20)\n"
    "for i in range(0, len(block), 4096): block[i] = 1\n"
    "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(60)\n"
)
GPU_CSV = "GPU-aaaa, 80, 81559\nGPU-bbbb, 20, 81559\nGPU-cccc, [N/A], [N/A]\n"


@pytest.fixture
def tree() -> Iterator[tuple[int, int]]:
    proc = subprocess.Popen([sys.executable, "-c", TREE], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        child = int(proc.stdout.readline())
        wait_for(lambda: (r := read_tree(proc.pid)) and r.rss >= 32 * 2**20, timeout=10)
        yield proc.pid, child
    finally:
        proc.kill()
        proc.wait()
        subprocess.run(["kill", "-9", str(child)], check=False)


def test_a_replica_tree_is_sampled_once_per_period_and_forgotten_when_gone(tree) -> None:
    parent, child = tree
    store = MetricStore()
    pids: dict[str, int | None] = {"workerpool0-0": parent, "workerpool1-0": None}
    use = gpus.parse(GPU_CSV, f"{child}, GPU-aaaa, 40779\n{parent}, GPU-bbbb, 0\n")
    sampler = Sampler(lambda: [("77", "p", pids)], store, sample_s=3600, read_gpus=lambda: use)

    assert sampler.sample() == 1  # the synthetic replica (no pid) is not sampled
    (replica, points), = store.snapshot("p")
    assert (replica.job_id, replica.task_name) == ("77", "workerpool0-0")
    assert points[series.MEMORY_BYTES][0][1] >= 32 * 2**20 + 1_000_000  # parent and child
    assert 0 <= points[series.CPU][0][1] <= 1 and 0 < points[series.MEMORY][0][1] < 1
    # Both GPUs the tree uses: their mean utilisation, and the share of their memory it holds.
    assert points[series.ACCELERATOR][0][1] == pytest.approx(0.5)
    assert points[series.ACCELERATOR_MEMORY][0][1] == pytest.approx(40779 / (2 * 81559))
    assert store.snapshot("other") == []

    assert sampler.sample() == 0  # not due again for SAMPLE_S
    pids["workerpool0-0"] = 99_999_999  # a process that does not exist
    assert sampler.sample() == 0 and len(store.snapshot("p")[0][1][series.CPU]) == 1


def test_nvidia_smi_text_and_processes_on_no_gpu() -> None:
    use = gpus.parse(GPU_CSV, "12, GPU-aaaa, 1024\n12, GPU-cccc, 5\nnot, a, row\n13, GPU-x, [N/A]")
    assert set(use.gpus) == {"GPU-aaaa", "GPU-bbbb"}  # no memory figure: not a GPU to share
    assert use.of([12]) == pytest.approx((0.8, 1024 / 81559))
    assert use.of([13]) is None and use.of([]) is None


def test_the_store_keeps_a_bounded_ring_and_drops_the_oldest_replica() -> None:
    store = MetricStore(ring=3, max_replicas=2)
    for t in range(5):
        store.add("p", "1", "workerpool0-0", t, {series.CPU: t / 10})
    store.add("p", "2", "workerpool0-0", 10, {series.CPU: 0.5})
    store.add("p", "3", "workerpool0-0", 11, {series.CPU: 0.5})
    kept = {r.job_id: points for r, points in store.snapshot("p")}
    assert set(kept) == {"2", "3"}
    store = MetricStore(ring=3)
    for t in range(5):
        store.add("p", "1", "workerpool0-0", t, {series.CPU: t / 10})
    assert [t for t, _ in store.snapshot("p")[0][1][series.CPU]] == [2, 3, 4]
