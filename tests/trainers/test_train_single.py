"""A single-process run prints the contract events and leaves checkpoints and a model behind."""

from __future__ import annotations

import json

import pytest
import torch

from contract.events import validate
from tests.trainers.conftest import STEPS
from tests.trainers.replicas import train
from trainers.config import ModelConfig
from trainers.torch.model import GPT

pytestmark = pytest.mark.trainers


def test_every_stdout_line_is_a_json_event(single_run):
    result, _, _ = single_run
    assert result.stdout_lines
    for line in result.stdout_lines:
        event = json.loads(line)
        assert {"severity", "message", "event"} <= event.keys()
        assert validate(event) == [], event  # as the contract (contract/events.py) says


def test_run_started(single_run):
    event = single_run[0].one("run_started")
    assert event["severity"] == "INFO"
    assert event["rank"] == 0 and event["world_size"] == 1
    assert event["strategy"] == "single"
    assert isinstance(event["params"], int) and 100_000 < event["params"] < 200_000
    assert event["resumed_from_step"] is None
    # The model's shape and precision, for the control plane's MFU (the tiny preset).
    tiny = ModelConfig()
    assert (event["n_layer"], event["n_head"], event["d_model"], event["seq_len"]) == (
        tiny.n_layer, tiny.n_head, tiny.n_embd, tiny.block_size)
    assert event["precision"] == "fp32"


def test_step_events(single_run):
    steps = single_run[0].of("step")
    assert [e["step"] for e in steps] == list(range(1, STEPS + 1))
    for e in steps:
        assert e["total_steps"] == STEPS
        assert isinstance(e["loss"], float) and 0 < e["loss"] < 10
        assert e["lr"] > 0 and e["tokens_per_s"] > 0 and e["step_time_s"] > 0
    # Warmup then cosine decay, recomputed from the step.
    lrs = [e["lr"] for e in steps]
    assert lrs[0] < lrs[19] and lrs[-1] < lrs[19]
    assert steps[-1]["loss"] < steps[0]["loss"] - 1.0  # it learns


def test_eval_checkpoint_and_finish_events(single_run):
    result, ckpt, _ = single_run
    evals = result.of("eval")
    assert [e["step"] for e in evals] == [10, 20, 30, 40]
    assert {"val_loss", "val_perplexity"} == evals[-1]["metrics"].keys()
    saved = result.of("checkpoint_saved")
    assert [e["step"] for e in saved] == list(range(5, STEPS + 1, 5))
    last = saved[-1]
    assert last["path"] == str(ckpt / "step-00000040")
    assert last["bytes"] > 100_000 and last["seconds"] >= 0
    finished = result.one("run_finished")
    assert finished["step"] == STEPS
    assert finished["final_loss"] == result.losses()[STEPS]
    assert finished["wall_s"] > 0
    assert not result.of("preempted") and not result.of("resumed")


def test_only_the_last_k_checkpoints_are_kept(single_run):
    _, ckpt, _ = single_run
    assert sorted(p.name for p in ckpt.iterdir()) == ["step-00000035", "step-00000040"]
    folder = ckpt / "step-00000040"
    assert {"COMMITTED", "model.pt", "optimizer.pt", "trainer.pt", "config.json"} == {
        p.name for p in folder.iterdir()
    }
    marker = json.loads((folder / "COMMITTED").read_text())
    assert marker["step"] == 40 and marker["world_size"] == 1 and marker["format"] == "torch"
    state = torch.load(folder / "trainer.pt", weights_only=True)
    assert state["step"] == 40 and state["data"]["next_step"] == 41
    assert {"torch", "python", "numpy", "cuda"} == state["rng"].keys()


def test_the_final_model_is_exported_and_loads(single_run):
    _, ckpt, model_dir = single_run
    config = json.loads((model_dir / "config.json").read_text())
    assert config["tokenizer"] == "bytes" and config["step"] == STEPS
    model = GPT(ModelConfig(**config["model"]), seed=0)
    model.load_state_dict(torch.load(model_dir / "model.pt", weights_only=True))
    checkpointed = torch.load(ckpt / "step-00000040" / "model.pt", weights_only=True)
    assert all(torch.equal(v, checkpointed[k]) for k, v in model.state_dict().items())
    logits, _ = model(torch.tensor([list(b"def ")]))
    assert logits.shape == (1, 4, 256)


def test_unknown_strategy_is_a_configuration_error():
    result = train(["--strategy", "horovod"], timeout=60)
    assert result.returncode == 2
    error = result.one("error")
    assert error["severity"] == "ERROR"
    assert "unknown strategy 'horovod'" in error["message"] and "zero3" in error["message"]


def test_a_text_file_and_aip_directories(tmp_path):
    text = tmp_path / "corpus.txt"
    text.write_bytes(b"the quick brown fox jumps over the lazy dog\n" * 200)
    result = train(
        ["--steps", "3", "--eval-every", "0", "--data", str(text)],
        timeout=60,
        AIP_CHECKPOINT_DIR=str(tmp_path / "aip-ckpt"),
        AIP_MODEL_DIR=str(tmp_path / "aip-model"),
    )
    assert result.returncode == 0, result.stderr
    assert result.one("checkpoint_saved")["path"] == str(tmp_path / "aip-ckpt" / "step-00000003")
    exported = json.loads((tmp_path / "aip-model" / "config.json").read_text())
    assert exported["train"]["data"] == str(text)
