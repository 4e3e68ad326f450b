"""Activation checkpointing (trainers/torch/activation_checkpointing.py) trains exactly as
without it, keeps less of each forward pass for backward (none > selective > full, measured),
keeps every parameter's name, and reaches every strategy from the trainer's command line."""

from __future__ import annotations

import json

import pytest
import torch

from tests.trainers.activation_memory import forward_activation_bytes
from tests.trainers.replicas import finish_all, start_world
from trainers.config import ModelConfig
from trainers.job.cluster import Process
from trainers.torch import activation_checkpointing, strategies
from trainers.torch.config import TrainConfig
from trainers.torch.main import build_parser, config_from_args
from trainers.torch.model import GPT
from trainers.torch.models import transformer_blocks
from trainers.torch.validation import validate

pytestmark = pytest.mark.trainers

STEPS = 3
REL = 1e-6


def _train(mode: str) -> tuple[list[float], int, GPT]:
    """STEPS AdamW steps of the tiny GPT on one fixed batch; the first forward measured."""
    model = GPT(ModelConfig(), seed=3)
    activation_checkpointing.apply(model, mode)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    tokens = torch.randint(0, 256, (8, 65), generator=torch.Generator().manual_seed(5))
    x, y = tokens[:, :-1], tokens[:, 1:]
    memory, (_, loss) = forward_activation_bytes(lambda: model(x, y))
    losses = []
    for _ in range(STEPS):
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.item())
        _, loss = model(x, y)
    return losses, memory, model


@pytest.fixture(scope="module")
def one_process():
    return {mode: _train(mode) for mode in activation_checkpointing.MODES}


def test_every_mode_trains_to_the_same_losses(one_process):
    reference, _, _ = one_process["none"]
    for mode in ("selective", "full"):
        assert one_process[mode][0] == pytest.approx(reference, rel=REL), mode


def test_checkpointing_keeps_less_for_backward(one_process):
    none, selective, full = (one_process[m][1] for m in ("none", "selective", "full"))
    assert none > selective > full > 0


def test_parameter_names_and_checkpoints_are_unchanged(one_process):
    assert all("forward" not in vars(b) for b in transformer_blocks(one_process["none"][2]))
    plain = one_process["none"][2].state_dict()
    for mode in ("selective", "full"):
        model = one_process[mode][2]
        assert list(model.state_dict()) == list(plain)
        model.load_state_dict(plain)  # a checkpoint written without it still loads
        assert all("_checkpoint_wrapped_module" not in n for n, _ in model.named_parameters())


def test_the_flag_and_the_setting_reach_the_config():
    def parsed(*args: str) -> TrainConfig:
        return config_from_args(build_parser().parse_args(list(args)), {})

    assert parsed().activation_checkpointing == "none"
    assert parsed().compile_blocks is False
    assert parsed("--activation-checkpointing", "full").activation_checkpointing == "full"
    assert parsed("--set", "activation_checkpointing=selective").activation_checkpointing == (
        "selective")
    assert parsed("--compile-blocks").compile_blocks is True
    with pytest.raises(SystemExit):
        parsed("--activation-checkpointing", "some")
    with pytest.raises(ValueError, match="activation_checkpointing must be one of none, "
                       "selective, full, not 'some'"):
        validate(parsed("--set", "activation_checkpointing=some"), 1)
    zero3 = parsed("--strategy", "zero3", "--activation-checkpointing", "selective")
    with pytest.raises(ValueError, match="use --activation-checkpointing full"):
        strategies.check_config(zero3, Process(0, 1, 0, 1, "127.0.0.1", 29500, "test"))


def test_hugging_face_decoder_layers_are_checkpointed_alike():
    """transformers' own decoder layers (a tiny Llama: rotary embeddings, grouped-query
    attention, SwiGLU) through the trainer's wrapper: the same loss and gradients, less kept."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from trainers.torch.models.hf import CausalLM

    config = LlamaConfig(vocab_size=256, hidden_size=64, intermediate_size=128,
                         num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                         max_position_embeddings=64, attn_implementation="sdpa")
    tokens = torch.randint(0, 256, (4, 33), generator=torch.Generator().manual_seed(2))
    measured = {}
    for mode in activation_checkpointing.MODES:
        torch.manual_seed(0)
        hf_model = LlamaForCausalLM(config)
        model = CausalLM(hf_model, hf_model, None)
        activation_checkpointing.apply(model, mode)
        memory, (_, loss) = forward_activation_bytes(
            lambda m=model: m(tokens[:, :-1], tokens[:, 1:]))
        loss.backward()
        grad = model.model.layers["0"].self_attn.q_proj.weight.grad
        measured[mode] = (memory, loss.item(), grad)
    none, selective, full = (measured[m] for m in ("none", "selective", "full"))
    assert none[0] > selective[0] > full[0] > 0
    for other in (selective, full):
        assert other[1] == pytest.approx(none[1], rel=REL)
        torch.testing.assert_close(other[2], none[2], rtol=1e-5, atol=1e-8)


def test_compile_blocks_compiles_each_block_forward():
    """Inductor compiles slowly on the shared CPUs: that each block's forward is compiled is
    checked here; a compiled run is the GPU machine's to time."""
    model = GPT(ModelConfig(n_layer=3), seed=1)
    activation_checkpointing.apply(model, "full", compile_blocks=True)
    for block in transformer_blocks(model):
        assert "forward" in vars(block)
        assert hasattr(block.forward, "_torchdynamo_orig_callable")
    assert list(model.state_dict()) == list(GPT(ModelConfig(n_layer=3), seed=1).state_dict())


# World size 2: FSDP and tensor parallelism measured in every mode, and the pipeline, in one
# group of processes (checkpointing_group.py). ZeRO stages 1-3 call the same `apply` before
# DeepSpeed wraps the model; they are left out here for DeepSpeed's start-up time.
GROUP_STEPS = 3
LAYOUTS = {
    "fsdp": ["--strategy", "fsdp"],
    "tp2": ["--strategy", "ddp", "--set", "tp=2"],
    "pp2": ["--strategy", "ddp", "--set", "pp=2", "--set", "micro_batch_size=2"],
}
MEASURED = ("fsdp", "tp2")


@pytest.fixture(scope="module")
def group(tmp_path_factory) -> dict[str, dict]:
    base = tmp_path_factory.mktemp("checkpointing")
    runs = [
        {"name": f"{layout}/{mode}",
         "args": ["--preset", "tiny", "--seed", "7", "--batch-size", "8", *args,
                  "--activation-checkpointing", mode]}
        for layout, args in LAYOUTS.items()
        for mode in (activation_checkpointing.MODES if layout in MEASURED else ("none", "full"))
    ]
    spec = base / "spec.json"
    spec.write_text(json.dumps({"steps": GROUP_STEPS, "runs": runs}))
    replicas = start_world([str(spec)], module="tests.trainers.checkpointing_group")
    results = finish_all(replicas, timeout=300)
    for result in results:
        assert result.returncode == 0, result.stderr[-5000:]
    return {e["name"]: e for e in results[0].of("measured")}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_sharded_and_model_parallel_runs_train_alike_in_every_mode(layout, group):
    reference = group[f"{layout}/none"]["losses"]
    assert len(reference) == GROUP_STEPS
    for name, run in group.items():
        if name.startswith(f"{layout}/"):
            assert run["losses"] == pytest.approx(reference, rel=REL), name


@pytest.mark.parametrize("layout", MEASURED)
def test_sharded_and_model_parallel_runs_keep_less(layout, group):
    none, selective, full = (group[f"{layout}/{m}"]["activation_bytes"]
                             for m in ("none", "selective", "full"))
    assert none > selective > full > 0
