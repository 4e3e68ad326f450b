"""The JAX trainer as a tuning trial: its hyperparameters arrive as Vertex passes them
(`--name=value` and `--name value`), its validation loss is reported in cloudml-hypertune's
file, and with W&B settings its steps and config are logged (offline, read back with wandb's own
records) and a `tracking` event gives the run's URL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.trainers.jax.conftest import TIMEOUT_S, start_jax, train_jax
from tests.trainers.wandb_records import config, history

pytestmark = pytest.mark.trainers

STEPS = 3


@pytest.fixture(scope="module")
def trial(compile_cache, tmp_path_factory):
    base = tmp_path_factory.mktemp("jax-trial")
    result = train_jax(
        ["--mesh", "1,1,1", "--steps", str(STEPS), "--eval-every", str(STEPS),
         # As Vertex adds a trial's parameters (VERTEX_FACTS.md A1), in both spellings.
         "--learning_rate=0.002", "--warmup_steps=1", "--weight_decay", "0.05",
         "--batch_size", "4"],
        1, compile_cache,
        CLOUD_ML_HP_METRIC_FILE=str(base / "hypertune" / "output.metrics"),
        CLOUD_ML_TRIAL_ID="4", AIP_MODEL_DIR=str(base / "model"),
        WANDB_MODE="offline", WANDB_PROJECT="tiny-gpt", WANDB_ENTITY="acme",
        WANDB_DIR=str(base), CLOUD_ML_JOB_ID="808")
    return result, base


def test_the_trial_reads_its_hyperparameters_as_vertex_passes_them(trial) -> None:
    result, base = trial
    trained = json.loads((base / "model" / "config.json").read_text())["train"]
    assert (trained["lr"], trained["warmup_steps"], trained["weight_decay"],
            trained["batch_size"]) == (0.002, 1, 0.05, 4)
    assert result.of("step")[0]["lr"] == pytest.approx(0.002)  # one warm-up step: the peak


def test_the_trial_reports_its_validation_loss_in_the_hypertune_file(trial) -> None:
    result, base = trial
    reports = [json.loads(line) for line in
               (base / "hypertune" / "output.metrics").read_text().splitlines()]
    (loss,) = [r for r in reports if "val_loss" in r]
    assert (loss["global_step"], loss["trial"]) == (str(STEPS), "4")
    # A string, as cloudml-hypertune writes it: the very figure the eval event printed.
    assert float(loss["val_loss"]) == result.of("eval")[-1]["metrics"]["val_loss"]


def test_the_trial_logs_its_steps_and_config_to_wandb(trial) -> None:
    result, base = trial
    event = result.one("tracking")
    assert event["provider"] == "wandb" and event["offline"] is True
    assert event["run_url"] == f"https://wandb.ai/acme/tiny-gpt/runs/{event['run_id']}"
    assert Path(event["run_dir"]).parent == base / "wandb"
    run_file = Path(event["run_dir"]) / f"run-{event['run_id']}.wandb"
    rows = history(run_file)
    printed = {e["step"]: e["loss"] for e in result.of("step")}
    assert sorted(rows) == sorted(printed) == list(range(1, STEPS + 1))
    assert all(rows[s]["loss"] == pytest.approx(v) for s, v in printed.items())
    assert rows[STEPS]["val_loss"] == pytest.approx(result.of("eval")[-1]["metrics"]["val_loss"])
    recorded = config(run_file)
    assert recorded["lr"] == 0.002 and recorded["mesh_data"] == 1


def test_a_bad_learning_rate_is_refused_before_any_work(compile_cache) -> None:
    result = start_jax(["--learning_rate", "-1"], 1, compile_cache).finish(TIMEOUT_S)
    assert result.returncode == 2
    assert "lr must be a positive number" in result.one("error")["message"]
