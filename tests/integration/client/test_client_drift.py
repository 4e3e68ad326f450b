"""The checked-in client is the one the live server's schema generates: regenerate it from
/api/schema/ with the pinned generator and compare every file. After changing the API, run
`make client` and commit what it writes."""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from config.devstack import Stack

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
CHECKED_IN = ROOT / "client" / "vertex_control_plane_client"


def test_the_checked_in_client_matches_the_live_schema(stack: Stack, tmp_path: Path) -> None:
    schema = tmp_path / "openapi.json"
    with urllib.request.urlopen(f"{stack.web_url}/api/schema/?format=json", timeout=60) as r:
        schema.write_bytes(r.read())
    out = tmp_path / "vertex_control_plane_client"
    bin_dir = Path(sys.executable).parent
    done = subprocess.run(
        [str(bin_dir / "openapi-python-client"), "generate", "--path", str(schema),
         "--config", str(ROOT / "client" / "generator.yaml"), "--meta", "none",
         "--output-path", str(out)],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"})
    assert done.returncode == 0, done.stdout + done.stderr
    drift = _differences(filecmp.dircmp(CHECKED_IN, out, ignore=["__pycache__", ".ruff_cache"]))
    assert not drift, ("client/ is behind the server's schema: run `make client` and commit.\n"
                       + "\n".join(drift[:50]))


def _differences(cmp: filecmp.dircmp, prefix: str = "") -> list[str]:
    found = [f"only checked in: {prefix}{n}" for n in cmp.left_only]
    found += [f"only generated: {prefix}{n}" for n in cmp.right_only]
    found += [f"differs: {prefix}{n}" for n in cmp.diff_files]
    for name, sub in cmp.subdirs.items():
        found += _differences(sub, f"{prefix}{name}/")
    return found
