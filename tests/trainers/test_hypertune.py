"""A tuning trial of the built-in trainer: its hyperparameters arrive as the --name=value
arguments Vertex passes, and its validation loss is reported in cloudml-hypertune's file."""

from __future__ import annotations

import json

import pytest

from tests.trainers.replicas import train
from trainers.job import hypertune

pytestmark = pytest.mark.trainers


def test_a_trial_reads_its_parameters_and_reports_its_validation_loss(tmp_path) -> None:
    metrics = tmp_path / "hypertune" / "output.metrics"
    result = train(
        ["--preset", "tiny", "--steps", "3", "--batch-size", "4", "--eval-every", "0",
         "--set", "eval_every=3",
         # As Vertex adds a trial's parameters (VERTEX_FACTS.md A1).
         "--learning_rate=0.002", "--warmup_steps=1", "--weight_decay=0.05", "--batch_size=8"],
        timeout=120,
        CLOUD_ML_HP_METRIC_FILE=str(metrics), CLOUD_ML_TRIAL_ID="7",
        AIP_MODEL_DIR=str(tmp_path / "model"),
    )
    assert result.returncode == 0, result.stderr
    config = json.loads((tmp_path / "model" / "config.json").read_text())["train"]
    assert (config["lr"], config["warmup_steps"], config["weight_decay"],
            config["batch_size"]) == (0.002, 1, 0.05, 8)
    steps = result.of("step")
    assert steps[0]["lr"] == pytest.approx(0.002)  # warm-up of one step: the peak at once
    evaluation = result.of("eval")[-1]
    reports = [json.loads(line) for line in metrics.read_text().splitlines()]
    loss = [r for r in reports if "val_loss" in r]
    assert len(loss) == 1 and loss[0]["global_step"] == "3" and loss[0]["trial"] == "7"
    # Strings, as cloudml-hypertune writes them; the very figure the eval event printed.
    assert float(loss[0]["val_loss"]) == evaluation["metrics"]["val_loss"]


def test_an_ordinary_run_reports_nothing(tmp_path) -> None:
    assert hypertune.report({"val_loss": 1.0}, 1, env={}) is None
    spec = json.dumps({"task": {"type": "workerpool0", "index": 0, "trial": ""}})
    assert hypertune.metric_file({"CLUSTER_SPEC": spec}) is None
    spec = json.dumps({"task": {"type": "workerpool0", "index": 0, "trial": "2"}})
    assert str(hypertune.metric_file({"CLUSTER_SPEC": spec})) == hypertune.DEFAULT_METRIC_FILE


def test_the_file_keeps_the_last_hundred_reports(tmp_path) -> None:
    env = {"CLOUD_ML_HP_METRIC_FILE": str(tmp_path / "m")}
    for step in range(120):
        hypertune.report({"val_loss": float(step)}, step, env=env)
    lines = (tmp_path / "m").read_text().splitlines()
    assert len(lines) == 100 and json.loads(lines[-1])["val_loss"] == "119.0"
    assert json.loads(lines[0])["global_step"] == "20"


def test_a_bad_learning_rate_is_refused_before_any_work(tmp_path) -> None:
    result = train(["--steps", "1", "--learning_rate=-1"], timeout=60)
    assert result.returncode == 2
    assert "lr must be a positive number" in result.stderr + "\n".join(result.stdout_lines)
