"""`make demo` as a newcomer without Redis runs it: SQLite, the embedded broker, the emulator, a
worker, beat and the web server, and the sample spot job preempted once, recovered, and
finished, with its steps followed in from the logs (the demo checks that itself); started again,
the same sample job and token."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from config.ports import reserve_port

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


def test_the_demo_trains_is_preempted_recovers_and_finishes(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["REDIS_URL"] = "redis://127.0.0.1:1/0"  # nothing answers there: the embedded broker
    command = [sys.executable, "-m", "config.demo", "--exit-when-done", "--steps", "150",
               "--timeout", "420", "--var-dir", str(tmp_path / "demo")]
    result = subprocess.run(
        [*command, "--port", str(reserve_port()), "--emulator-port", str(reserve_port())],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out[-6000:]
    assert "embedded broker" in out
    assert "armed a spot preemption for step 50" in out
    assert re.search(r"SUCCEEDED after 150 steps and [1-9]\d* restart\(s\)", out), out[-3000:]
    # Its secret key made for it and its logs, readable by this user only.
    key = tmp_path / "demo" / "secret_key"
    first_key = key.read_text()
    assert len(first_key) > 40 and key.stat().st_mode & 0o777 == 0o600
    logs = list((tmp_path / "demo" / "logs").glob("*.log"))
    assert {p.name for p in logs} >= {"web.log", "worker.log", "beat.log", "emulator.log"}
    assert {p.stat().st_mode & 0o777 for p in logs} == {0o600}

    # Started again on the same folder: the same sample job, read with the same token (no
    # second job, no token revoked), already finished as the first start saw it.
    again = subprocess.run(
        [*command, "--port", str(reserve_port()), "--emulator-port", str(reserve_port())],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    out_again = again.stdout + again.stderr
    assert again.returncode == 0, out_again[-6000:]
    job = re.search(r"/jobs/(\d+)/", result.stdout)
    token = re.search(r"Token ([^'\s]+)", result.stdout)
    assert job and token, result.stdout[-3000:]
    assert f"the sample job and token of the last start: job {job[1]}" in out_again
    assert f"/jobs/{job[1]}/" in out_again and f"Token {token[1]}" in out_again
    assert "armed a spot preemption" not in out_again
    assert key.read_text() == first_key  # what it encrypted with the key still reads
