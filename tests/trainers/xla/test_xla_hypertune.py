"""A tuning trial of the PyTorch/XLA trainer: its hyperparameters arrive as the --name=value
arguments Vertex passes, the trial id in CLUSTER_SPEC, and its final validation loss is
reported in cloudml-hypertune's file (trainers/job/hypertune.py), as the other trainers do."""

from __future__ import annotations

import json

import pytest

from tests.trainers.xla.conftest import train_xla

pytestmark = pytest.mark.trainers


def test_a_trial_reports_its_final_validation_loss(xla_python, tmp_path) -> None:
    metrics = tmp_path / "hypertune" / "output.metrics"
    # As a Vertex trial's replica sees it: the trial in CLUSTER_SPEC's task.
    spec = {"cluster": {"workerpool0": ["127.0.0.1:2222"]},
            "task": {"type": "workerpool0", "index": 0, "trial": "4"}}
    result = train_xla(
        xla_python,
        ["--steps", "3", "--set", "eval_every=3", "--set", "eval_batches=1",
         "--learning_rate=0.002", "--warmup_steps=1", "--weight_decay=0.05"],
        CLOUD_ML_HP_METRIC_FILE=str(metrics), CLUSTER_SPEC=json.dumps(spec),
    )
    assert result.one("run_finished")["step"] == 3
    assert result.of("step")[0]["lr"] == pytest.approx(0.002)  # the trial's learning rate
    evaluation = result.one("eval")
    reports = [json.loads(line) for line in metrics.read_text().splitlines()]
    loss = [r for r in reports if "val_loss" in r]
    assert len(loss) == 1 and (loss[0]["global_step"], loss[0]["trial"]) == ("3", "4")
    # Strings, as cloudml-hypertune writes them; the very figure the eval event printed.
    assert float(loss[0]["val_loss"]) == evaluation["metrics"]["val_loss"]
