"""Ray Train: the product's trainer under a Ray TorchTrainer on a real local Ray cluster (the
emulator's, a head and one worker node): two ranks train with DDP, print the same events as
under torchrun, and commit checkpoints to the shared checkpoint dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from localvertex.clusters.ray_nodes import RayCluster, ray_executable
from localvertex.replicas import job_network
from tests.conftest import require

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.trainers


def events(output: str) -> list[dict]:
    """Event lines as Ray forwards them: `(RayTrainWorker pid=...) {json}`."""
    found = []
    for line in output.splitlines():
        start = line.find('{"severity"')
        if start >= 0:
            try:
                found.append(json.loads(line[start:]))
            except ValueError:
                continue
    return found


def test_two_ray_train_workers_train_the_product_trainer(tmp_path):
    require(ray_executable() is not None,
            "Ray is not installed (pip install -e '.[ray]'; make venv installs the ray extra)")
    cluster = RayCluster("ray-train-test", tmp_path / "data", REPO)
    try:
        cluster.start(1)
        checkpoints = tmp_path / "ckpt"
        # The driver runs where a Ray job's does: on the cluster's network (its own
        # namespace when the emulator is root; the host's loopback cannot reach its GCS).
        run = subprocess.run(
            job_network.entering(
                [sys.executable, "-m", "trainers.ray_train", "--workers", "2",
                 "--storage-path", str(tmp_path / "ray-results"), "--", "--preset", "tiny",
                 "--steps", "6", "--checkpoint-every", "3", "--checkpoint-dir",
                 str(checkpoints)], cluster.netns, None),
            env={**os.environ, "RAY_ADDRESS": f"127.0.0.1:{cluster.gcs_port}",
                 "RAY_DEDUP_LOGS": "0"},
            cwd=REPO, capture_output=True, text=True, timeout=400)
        output = run.stdout + run.stderr
        assert run.returncode == 0, output[-5000:]
        seen = events(output)
        started = [e for e in seen if e.get("event") == "run_started"]
        assert {e["rank"] for e in started} == {0, 1}
        assert {e["world_size"] for e in started} == {2}
        steps = sorted({e["step"] for e in seen if e.get("event") == "step"})
        assert steps[-1] == 6
        assert any(e.get("event") == "run_finished" for e in seen)
        assert sorted(p.name for p in checkpoints.glob("step-*")) == [
            "step-00000003", "step-00000006"]
    finally:
        cluster.stop()
    assert cluster.pids() == []
