"""W&B tracking from a real trainer run (offline: the run file read with wandb's own records),
the `tracking` event with the run's URL, and no wandb at all without W&B settings."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.trainers.replicas import ROOT, child_env, train
from tests.trainers.wandb_records import config, history
from trainers.job import tracking

pytestmark = pytest.mark.trainers

STEPS = 6


@pytest.fixture(scope="module")
def tracked_run(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("wandb")
    result = train(["--preset", "tiny", "--steps", str(STEPS), "--batch-size", "4",
                    "--strategy", "single", "--eval-every", "3", "--seed", "7"],
                   WANDB_MODE="offline", WANDB_PROJECT="tiny-gpt", WANDB_ENTITY="acme",
                   WANDB_DIR=str(base), CLOUD_ML_JOB_ID="4242")
    assert result.returncode == 0, result.stderr[-3000:]
    return result, base


def test_the_run_file_holds_every_step_the_trainer_reported(tracked_run) -> None:
    result, base = tracked_run
    event = result.one("tracking")
    run_dir = Path(event["run_dir"])
    assert run_dir.parent == base / "wandb" and run_dir.name.startswith("offline-run-")
    rows = history(run_dir / f"run-{event['run_id']}.wandb")
    reported = {e["step"]: e for e in result.of("step")}
    assert sorted(reported) == list(range(1, STEPS + 1))
    assert sorted(rows) == sorted(reported)
    for step, printed in reported.items():
        assert rows[step]["loss"] == pytest.approx(printed["loss"])
        assert rows[step]["lr"] == pytest.approx(printed["lr"])
    evals = {e["step"]: e["metrics"]["val_loss"] for e in result.of("eval")}
    assert evals and all(rows[s]["val_loss"] == pytest.approx(v) for s, v in evals.items())


def test_the_run_records_the_training_config(tracked_run) -> None:
    result, _ = tracked_run
    event = result.one("tracking")
    recorded = config(Path(event["run_dir"]) / f"run-{event['run_id']}.wandb")
    assert recorded["preset"] == "tiny" and recorded["steps"] == STEPS
    assert recorded["seed"] == 7 and recorded["strategy"] == "single"


def test_the_tracking_event_gives_the_url_the_run_gets_once_synced(tracked_run) -> None:
    result, _ = tracked_run
    event = result.one("tracking")
    assert event["provider"] == "wandb" and event["offline"] is True
    assert event["run_url"] == f"https://wandb.ai/acme/tiny-gpt/runs/{event['run_id']}"
    # Printed once the run exists, before the first step.
    names = [e["event"] for e in result.events]
    assert names.index("run_started") < names.index("tracking") < names.index("step")


def test_no_settings_no_wandb_import() -> None:
    code = ("import sys; from trainers.job import tracking; from trainers.torch import trainer; "
            "t = tracking.start({'steps': 1}, 0, {}); "
            "print(type(t).__name__, 'wandb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=child_env(),
                         capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["NoTracker", "False"]


def test_only_rank_zero_tracks() -> None:
    code = ("import sys; from trainers.job import tracking; "
            "t = tracking.start({}, 1, {'WANDB_PROJECT': 'p', 'WANDB_MODE': 'offline'}); "
            "print(type(t).__name__, 'wandb' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=child_env(),
                         capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == ["NoTracker", "False"]


@pytest.mark.parametrize(("entity", "project"), [
    ("acme/../x", "p"), ("acme", "p?x=1"), ("", "p"), ("a b", "p"), ("acme", "p#frag")])
def test_no_url_from_names_that_would_leave_their_place(entity: str, project: str) -> None:
    assert tracking.run_url({}, entity, project, "abc") == ""


def test_a_dedicated_server_is_linked_at_its_app_host() -> None:
    env = {"WANDB_BASE_URL": "https://api.wandb.example.com/"}
    assert tracking.run_url(env, "acme", "p", "r1") == "https://wandb.example.com/acme/p/runs/r1"
    assert tracking.run_url({"WANDB_BASE_URL": "javascript:alert(1)"}, "acme", "p", "r1") == (
        "https://wandb.ai/acme/p/runs/r1")
