"""The emulator's Ray nodes all run on this one machine and share the head's session folder:
only the head runs a log monitor, so a Ray job's output holds each worker line once (with one
per node, every line came once per node: ray-project/ray#48642). Checked on the arguments of
`ray start`, and against the installed Ray's own `ray start --help`; no node is started."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from localvertex.clusters import ray_nodes
from localvertex.clusters.ray_nodes import RayCluster


def cluster(tmp_path: Path) -> RayCluster:
    ray = RayCluster(resource_id="args", data_dir=tmp_path / "data", workdir=tmp_path,
                     gcs_port=6379, dashboard_port=8265, client_port=10001)
    ray.temp_dir = tmp_path / "lvray"
    return ray


def options(args: list[str]) -> dict[str, str]:
    """`--name value` pairs (a flag alone maps to "")."""
    found: dict[str, str] = {}
    for index, arg in enumerate(args):
        if arg.startswith("--"):
            following = args[index + 1] if index + 1 < len(args) else ""
            found[arg] = "" if following.startswith("--") else following
    return found


def test_only_the_head_forwards_the_workers_output(tmp_path: Path) -> None:
    ray = cluster(tmp_path)
    worker = options(ray.worker_args())
    assert worker["--address"] == "127.0.0.1:6379"
    assert worker["--include-log-monitor"] == "false"
    head = options(ray.head_args())
    assert "--head" in head and "--include-log-monitor" not in head  # Ray's default: on
    assert head["--temp-dir"] == str(tmp_path / "lvray")


# In CI Ray is installed: a missing one fails there instead of skipping.
@pytest.mark.skipif(ray_nodes.ray_executable() is None and os.environ.get("CI") != "true",
                    reason="Ray is not installed (pip install -e '.[ray]')")
def test_the_installed_ray_knows_every_option_the_emulator_gives(tmp_path: Path) -> None:
    exe = ray_nodes.ray_executable()
    assert exe is not None
    helped = subprocess.run([exe, "start", "--help"], capture_output=True, text=True,
                            timeout=120, check=True).stdout
    known = set(re.findall(r"--[a-z][a-z0-9-]*", helped))
    ray = cluster(tmp_path)
    given = set(options(ray.head_args())) | set(options(ray.worker_args()))
    assert given <= known, given - known
