"""`vcp`, the command line, against the real stack: log in (token stored 0600), submit a gcloud
YAML and wait for it (exit 0), follow its logs live until it ends, an invalid file refused on
its field (exit 1), a usage error (exit 2), every output format, and shell completion."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from config.devstack import Stack
from tests.integration.client.conftest import GCLOUD_YAML, INVALID_GCLOUD_YAML

pytestmark = pytest.mark.integration

Vcp = Callable[..., subprocess.CompletedProcess[str]]


def test_login_checks_the_token_and_stores_it_for_the_user_alone(
        vcp: Vcp, stack: Stack, member: dict[str, Any], tmp_path: Path) -> None:
    refused = vcp("login", "--server", stack.web_url, "--token-stdin", stdin="not-a-token\n",
                  login=False)
    assert refused.returncode == 1, refused.stderr
    stored = tmp_path / "config" / "vcp" / "config.json"
    assert not stored.exists()

    done = vcp("login", "--server", stack.web_url, "--token-stdin",
               stdin=member["token"] + "\n", login=False)
    assert done.returncode == 0, done.stderr
    assert "vision (member)" in done.stderr
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert json.loads(stored.read_text()) == {"server": stack.web_url, "token": member["token"]}
    # Later commands need neither --token nor VCP_TOKEN.
    listed = vcp("-o", "json", "presets", login=False)
    assert listed.returncode == 0, listed.stderr
    assert any(p["slug"] for p in json.loads(listed.stdout))


def test_submit_wait_exits_0_and_logs_follow_prints_lines_until_the_job_ends(
        vcp: Vcp, tmp_path: Path) -> None:
    job_file = tmp_path / "job.yaml"
    job_file.write_text(GCLOUD_YAML)
    env = {**vcp.env, "PYTHONUNBUFFERED": "1"}  # type: ignore[attr-defined]
    submit = subprocess.Popen(
        [sys.executable, "-m", "vcp.main", "-o", "json", "jobs", "submit", "-f", str(job_file),
         "--name", "cli-wait", "--wait"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    assert submit.stderr is not None
    first = submit.stderr.readline()
    assert first.startswith("submitted job "), first
    job_id = first.split()[2]

    # Follow the logs while the job runs: lines arrive, and the command ends with the job.
    follow = subprocess.Popen([sys.executable, "-m", "vcp.main", "logs", job_id, "-f"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, cwd=tmp_path)
    assert follow.stdout is not None
    lines = []
    for line in follow.stdout:
        lines.append(line)
    assert follow.wait(timeout=300) == 0, follow.stderr.read() if follow.stderr else ""
    assert any("finished at step 12" in line for line in lines), "".join(lines[-20:])
    assert any("workerpool0-0" in line for line in lines)

    out, err = submit.communicate(timeout=300)
    assert submit.returncode == 0, first + err
    job = json.loads(out)
    assert job["state"] == "SUCCEEDED" and job["name"] == "cli-wait"
    assert f"job {job_id}: SUCCEEDED" in err

    # The job as the other commands show it.
    got = vcp("-o", "yaml", "jobs", "get", job_id)
    assert got.returncode == 0, got.stderr
    assert yaml.safe_load(got.stdout)["custom_job"]["jobSpec"]["workerPoolSpecs"][0][
        "containerSpec"]["command"] == ["python", "-m", "trainers.train"]
    table = vcp("jobs", "list", "--state", "SUCCEEDED")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split()[:4] == ["ID", "NAME", "TEAM", "STATE"]
    assert any(row.split()[:2] == [job_id, "cli-wait"] for row in table.stdout.splitlines())
    events = vcp("-o", "json", "events", job_id)
    assert {e["kind"] for e in json.loads(events.stdout)} >= {"checkpoint_saved"}
    exported = vcp("jobs", "export", job_id)
    assert exported.returncode == 0, exported.stderr
    assert yaml.safe_load(exported.stdout)["workerPoolSpecs"][0]["machineSpec"][
        "machineType"] == "n1-standard-4"
    # Cancelling an ended job is refused, on the field that says why.
    cancel = vcp("jobs", "cancel", job_id)
    assert cancel.returncode == 1
    assert "state: the job is already SUCCEEDED" in cancel.stderr


def test_an_invalid_file_exits_1_with_the_field_error_and_creates_nothing(
        vcp: Vcp, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(INVALID_GCLOUD_YAML)
    before = json.loads(vcp("-o", "json", "jobs", "list", "--limit", "1000").stdout)
    for command in (["jobs", "submit", "-f", str(bad), "--wait"],
                    ["jobs", "validate", "-f", str(bad)]):
        done = vcp(*command)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "workerPoolSpecs[0].machineSpec.acceleratorCount" in done.stderr
        assert "a2-highgpu-4g takes 4 NVIDIA_TESLA_A100" in done.stderr
    # A job request with a field the server does not know: refused, not silently dropped.
    typo = tmp_path / "typo.yaml"
    typo.write_text("name: typo\nchief: {machine_type: n1-standard-4, replicas: 2}\n")
    done = vcp("jobs", "submit", "-f", str(typo))
    assert done.returncode == 1
    assert "chief.replicas: unknown field" in done.stderr
    after = json.loads(vcp("-o", "json", "jobs", "list", "--limit", "1000").stdout)
    assert len(after) == len(before)


def test_validate_and_estimate_a_gcloud_yaml(vcp: Vcp, tmp_path: Path) -> None:
    job_file = tmp_path / "job.yaml"
    job_file.write_text(GCLOUD_YAML)
    valid = vcp("-o", "json", "jobs", "validate", "-f", str(job_file))
    assert valid.returncode == 0, valid.stderr
    assert json.loads(valid.stdout)["valid"] is True
    priced = vcp("-o", "json", "jobs", "estimate", "-f", str(job_file), "--hours", "2")
    assert priced.returncode == 0, priced.stderr
    estimate = json.loads(priced.stdout)
    assert estimate["duration"]["basis"] == "hours"
    assert isinstance(estimate["total"]["on_demand"], int) and estimate["total"]["on_demand"] > 0


def test_usage_errors_exit_2(vcp: Vcp) -> None:
    for args in (["jobs", "get", "not-a-number"], ["jobs", "submit"], ["-o", "xml", "presets"],
                 ["no-such-command"]):
        done = vcp(*args)
        assert done.returncode == 2, (args, done.stderr)


def test_an_unknown_job_is_refused_and_an_unreachable_server_is_3(vcp: Vcp) -> None:
    missing = vcp("jobs", "get", "999999")
    assert missing.returncode == 1
    assert "HTTP 404" in missing.stderr
    env = {**vcp.env, "VCP_SERVER": "http://127.0.0.1:9"}  # type: ignore[attr-defined]
    down = subprocess.run([sys.executable, "-m", "vcp.main", "presets"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert down.returncode == 3, down.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_shell_completion(vcp: Vcp, shell: str) -> None:
    script = vcp("completion", shell)
    assert script.returncode == 0
    assert "_VCP_COMPLETE" in script.stdout
    # What the shell asks for as the user presses TAB after `vcp jo`.
    env = {**os.environ, **vcp.env, "_VCP_COMPLETE": "bash_complete",  # type: ignore[attr-defined]
           "COMP_WORDS": "vcp jo", "COMP_CWORD": "1"}
    done = subprocess.run([sys.executable, "-m", "vcp.main"], env=env, capture_output=True,
                          text=True, timeout=60)
    assert "plain,jobs" in done.stdout.splitlines()
