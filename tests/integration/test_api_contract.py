"""The API does what its schema says: schemathesis, every check (`--checks all`) and every
phase (examples, coverage, fuzzing and the stateful phase that follows links from created
objects), against the live stack (gunicorn, PostgreSQL, the worker, the emulator) with a team
member's token. Zero failures of any kind.

The number of examples per operation is bounded so the run takes a few minutes; the seed is
fixed, so a failure reproduces. tests/integration/schemathesis.toml says what the schema cannot
express and how that is configured.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import requests

from config.devstack import Stack

pytestmark = pytest.mark.integration

CONFIG = Path(__file__).with_name("schemathesis.toml")
EXAMPLES_PER_OPERATION = 4
SEED = 20261124


def test_schemathesis_finds_no_failure(stack: Stack, tmp_path: Path) -> None:
    # A team of its own: what the fuzzer creates (jobs, templates, tokens) never meets the
    # jobs the other tests on this stack run and count.
    member = json.loads(stack.manage("seed_demo", "--username", "contract", "--team",
                                     "contract", "--role", "member", capture=True))
    schemathesis = Path(sys.executable).with_name("schemathesis")
    done = subprocess.run(
        [str(schemathesis), "--config-file", str(CONFIG), "run",
         f"{stack.web_url}/api/schema/?format=json",
         "--checks", "all", "--phases", "examples,coverage,fuzzing,stateful",
         "--max-examples", str(EXAMPLES_PER_OPERATION), "--seed", str(SEED),
         "--generation-database", "none", "--no-shrink", "--workers", "2",
         "--header", f"Authorization: Token {member['token']}",
         "--report", "ndjson", "--report-dir", str(tmp_path)],
        capture_output=True, text=True, timeout=900, cwd=tmp_path,
        env=_env(stack))
    _cancel_what_it_started(stack, member["token"])
    failures = done.stdout.split("= FAILURES =")[-1].split("= WARNINGS =")[0][:12000]
    summary = done.stdout[-4000:]
    assert done.returncode == 0, failures + summary + done.stderr[-3000:]
    assert "Failures:" not in summary and "Errors:" not in summary, failures + summary


def _env(stack: Stack) -> dict[str, Any]:
    return {k: v for k, v in stack.env().items() if not k.startswith("SCHEMATHESIS_")}


def _cancel_what_it_started(stack: Stack, token: str) -> None:
    """The jobs the fuzzer submitted still hold the emulator's machines: cancel them, so the
    tests that come after run on an idle stack."""
    session = requests.Session()
    session.headers["Authorization"] = f"Token {token}"
    jobs = session.get(f"{stack.web_url}/api/v1/jobs/", params={"limit": 1000},
                       timeout=30).json().get("results", [])
    for job in jobs:
        if job["state"] not in ("SUCCEEDED", "FAILED", "CANCELLED"):
            session.post(f"{stack.web_url}/api/v1/jobs/{job['id']}/cancel/", timeout=30)
