"""Hugging Face causal LMs in the PyTorch trainer: transformers' models, weights and loss.

Tiny models made by transformers (tests/trainers/hf_models.py) are trained through the
trainer's CLI, validation and `Trainer.run()`, several runs per group of processes: at world
size 1 (the reference, round trips through safetensors, the first step's loss against
transformers' own), 2 (ddp, fsdp, zero3) and 4 (fsdp hybrid_shard on a 2 x 2 mesh, tp, pp,
tp x pp). transformers is the external truth: its loss on the same weights and batch, and its
`from_pretrained` of the trainer's export.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from bench import memory_fit
from tests.trainers import hf_models
from tests.trainers.conftest import Group
from tests.trainers.hf_models import RUN_ARGS, make_model, make_tokenizer, run_group
from tests.trainers.replicas import assert_losses_close, train
from trainers.torch.main import build_parser, config_from_args
from trainers.torch.validation import validate

pytestmark = pytest.mark.trainers

STEPS = 20
REL = 1e-4  # fp32, 20 steps
LOSS_REL = 1e-5  # the first step against transformers
# name: (model, strategy flags). The untied Llama and Qwen3, whose head is its embedding and
# whose attention normalises each head (tensor parallelism sums those norms' gradients).
WORLD_2 = {
    "ddp2": ("llama", ["--strategy", "ddp"]),
    "fsdp2-full_shard": ("qwen3", ["--strategy", "fsdp", "--fsdp-mode", "full_shard"]),
    "zero3": ("qwen3", ["--strategy", "zero3"]),
}
WORLD_4 = {
    "fsdp-hybrid_shard-2x2": ("llama", ["--strategy", "fsdp", "--fsdp-mode", "hybrid_shard",
                                        "--set", "fsdp.shard_size=2"]),
    "tp2": ("qwen3", ["--strategy", "ddp", "--set", "tp=2"]),
    "pp2": ("qwen3", ["--strategy", "ddp", "--set", "pp=2"]),
    "tp2xpp2": ("qwen3", ["--strategy", "ddp", "--set", "tp=2", "--set", "pp=2"]),
    # FSDP over tensor-parallel shards (2-d DTensors), as the large presets run.
    "tp2xfsdp2": ("llama", ["--strategy", "fsdp", "--set", "tp=2"]),
}
# Where a fresh (--model-config) model is exported untrained, to compare its initial weights.
FRESH = {1: ["--strategy", "single"], 2: WORLD_2["zero3"][1], 4: WORLD_4["tp2xpp2"][1]}


@pytest.fixture(scope="module")
def assets(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("hf")
    for seed, name in enumerate(hf_models.ARCHITECTURES):
        make_model(base / name, name, seed)
    # The same Llama, saved in shards with an index.
    make_model(base / "llama-sharded", "llama", 0, max_shard_size="20KB")
    make_tokenizer(base / "tokenizer.json")
    return base


def _args(assets: Path, *extra: str) -> list[str]:
    return [*RUN_ARGS, "--tokenizer", str(assets / "tokenizer.json"), *extra]


def _fresh_run(assets: Path, world_size: int) -> dict:
    return {"name": f"fresh{world_size}", "args": _args(
        assets, "--model-config", str(assets / "llama" / "config.json"), "--steps", "0",
        "--export-hf", str(assets / "out" / f"fresh{world_size}"), *FRESH[world_size])}


@pytest.fixture(scope="module")
def world1(assets):
    llama = ["--init-from", str(assets / "llama")]
    runs = [
        {"name": "llama", "args": _args(
            assets, *llama, "--strategy", "single", "--steps", str(STEPS),
            "--checkpoint-dir", str(assets / "ckpt"), "--checkpoint-every", "0",
            "--export-hf", str(assets / "out" / "llama"))},
        {"name": "qwen3", "args": _args(
            assets, "--init-from", str(assets / "qwen3"), "--strategy", "single",
            "--steps", str(STEPS))},
        *({"name": name, "args": _args(
            assets, "--init-from", str(assets / name), "--strategy", "single", "--steps", "1")}
          for name in ("mistral", "qwen2", "gemma")),
        # Steps 0: read the weights and write them out again (a sharded Llama, a tied Qwen3).
        {"name": "llama/roundtrip", "args": _args(
            assets, "--init-from", str(assets / "llama-sharded"), "--strategy", "single",
            "--steps", "0", "--export-hf", str(assets / "out" / "llama-roundtrip"),
            "--set", "export_shard_bytes=30000")},
        {"name": "qwen3/roundtrip", "args": _args(
            assets, "--init-from", str(assets / "qwen3"), "--strategy", "single",
            "--steps", "0", "--export-hf", str(assets / "out" / "qwen3-roundtrip"))},
        _fresh_run(assets, 1),
    ]
    return run_group(assets / "world1", runs, 1)


def _memory_runs(assets: Path) -> list[dict]:
    """bench/memory_fit.py's model and layouts, each rank measured and held to its limit."""
    config = assets / "memory-fit" / "config.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps(memory_fit.CONFIG))
    return [{"name": f"memory {name}", "args": _args(
                assets, "--model-config", str(config), "--steps", "2",
                "--set", "measure_memory=true",
                "--set", f"memory_limit_mib={memory_fit.LIMIT_MIB}", *flags)}
            for name, (flags, _, _) in memory_fit.LAYOUTS.items()]


@pytest.fixture(scope="module")
def groups(assets, world1) -> dict[int, Group]:
    """The strategies' runs at world sizes 2 and 4 (and at 4 the memory-fit runs), one group
    of processes each."""
    out = {}
    for world_size, layouts in ((2, WORLD_2), (4, WORLD_4)):
        runs = [{"name": name, "args": _args(
                    assets, "--init-from", str(assets / model), "--steps", str(STEPS), *args)}
                for name, (model, args) in layouts.items()]
        runs.append(_fresh_run(assets, world_size))
        if world_size == 4:
            runs += _memory_runs(assets)
        out[world_size] = run_group(assets / f"world{world_size}", runs, world_size)
    return out


@pytest.fixture(scope="module")
def layouts(groups):
    """The strategies' runs at world sizes 2 and 4: name -> losses."""
    losses = {}
    for world_size, layouts in ((2, WORLD_2), (4, WORLD_4)):
        for name in [*layouts, f"fresh{world_size}"]:
            assert groups[world_size].exit_code(name) == 0
            losses[name] = groups[world_size].losses(name)
    return losses


@pytest.mark.parametrize("name", list(memory_fit.LAYOUTS))
def test_a_model_too_big_for_one_rank_trains_sharded_as_its_memory_plan_says(groups, name):
    """One process alone would need more than each rank's limit; every rank of the sharded
    layout stays under it (the meter fails a run that does not) and its measured peak is the
    plan's figure within 15%."""
    limit = memory_fit.LIMIT_MIB * memory_fit.MIB
    alone = memory_fit.planned_bytes(memory_fit.CONFIG, {"strategy": "ddp"}, 1,
                                     memory_fit.BATCH)
    assert alone > 1.5 * limit
    run = f"memory {name}"
    assert groups[4].exit_code(run) == 0
    [finished] = groups[4].of(run, "run_finished")
    peaks = finished["peak_tensor_bytes"]
    assert len(peaks) == 4 and max(peaks) <= limit
    _, layout, micro = memory_fit.LAYOUTS[name]
    planned = memory_fit.planned_bytes(memory_fit.CONFIG, layout, 4, micro)
    assert max(peaks) == pytest.approx(planned, rel=0.15), (peaks, planned)


@pytest.mark.parametrize(("run", "source"), [("llama", "llama-sharded"), ("qwen3", "qwen3")])
def test_weights_read_then_exported_are_the_same_bits(assets, world1, run, source):
    assert world1.exit_code(f"{run}/roundtrip") == 0
    out = assets / "out" / f"{run}-roundtrip"
    exported, saved = _tensors(out), _tensors(assets / source)
    assert exported.keys() == saved.keys()
    for name, tensor in saved.items():
        assert torch.equal(exported[name], tensor), name
    if run == "qwen3":  # tied: the head is saved once, as the embedding, as transformers does
        assert "lm_head.weight" not in _tensors(out)
    else:  # above export_shard_bytes: shards and their index
        index = json.loads((out / "model.safetensors.index.json").read_text())
        assert len(set(index["weight_map"].values())) > 1
    assert (out / "tokenizer.json").read_bytes() == (assets / "tokenizer.json").read_bytes()


def _tensors(folder: Path) -> dict[str, torch.Tensor]:
    found: dict[str, torch.Tensor] = {}
    for file in sorted(folder.glob("*.safetensors")):
        found.update(load_file(file))
    return dict(sorted(found.items()))


@pytest.mark.parametrize("name", ["llama", "mistral", "qwen2", "qwen3", "gemma"])
def test_first_step_loss_is_transformers_loss_on_the_same_batch(assets, world1, name):
    trained = world1.losses(name)[1]
    rows = hf_models.first_batch(assets / "tokenizer.json")
    expected = hf_models.transformers_loss(assets / name, rows)
    assert trained == pytest.approx(expected, rel=LOSS_REL)


@pytest.mark.parametrize("name", [*WORLD_2, *WORLD_4])
def test_every_layout_trains_like_one_process(world1, layouts, name):
    model, _ = {**WORLD_2, **WORLD_4}[name]
    reference = world1.losses(model)
    assert sorted(layouts[name]) == list(range(1, STEPS + 1))
    assert_losses_close(layouts[name], reference, REL)


def test_a_fresh_model_starts_from_the_same_weights_in_every_layout(assets, world1, layouts):
    reference = _tensors(assets / "out" / "fresh1")
    assert "model.layers.1.mlp.down_proj.weight" in reference
    for world_size in (2, 4):
        exported = _tensors(assets / "out" / f"fresh{world_size}")
        assert exported.keys() == reference.keys()
        for name, tensor in reference.items():
            assert torch.equal(exported[name], tensor), (world_size, name)


def test_the_export_loads_in_transformers_with_the_trainers_logits(assets, world1):
    from transformers import AutoModelForCausalLM

    from trainers.torch.models import hf_config, hf_weights

    out = assets / "out" / "llama"
    exported = AutoModelForCausalLM.from_pretrained(out, dtype=torch.float32)
    # The trainer's own model: its final checkpoint, in the trainer's module.
    spec = hf_config.read_spec(str(assets / "llama" / "config.json"))
    model = hf_weights.build(spec, hf_weights.FreshWeights(0))
    model.materialise("cpu")
    state = torch.load(assets / "ckpt" / f"step-{STEPS:08d}" / "model.pt", weights_only=True)
    model.load_state_dict(state)
    prompt = torch.tensor([[5, 17, 300, 42, 9, 250, 3, 77]])
    with torch.no_grad():
        theirs = exported(input_ids=prompt).logits
        ours, _ = model(prompt)
    assert torch.allclose(theirs, ours, rtol=1e-6, atol=1e-6)
    assert not torch.equal(state["lm_head.weight"], load_file(
        assets / "llama" / "model.safetensors")["lm_head.weight"])  # it did train


# -- what is refused before anything starts ----------------------------------------------------


def _validate(*args: str, world_size: int = 1) -> None:
    validate(config_from_args(build_parser().parse_args(list(args)), {}), world_size)


def _config_copy(assets: Path, folder: str, **changes) -> Path:
    target = assets / folder
    shutil.copytree(assets / "llama", target, dirs_exist_ok=True)
    values = json.loads((target / "config.json").read_text())
    values.update(changes)
    for key in [k for k, v in changes.items() if v is None]:
        del values[key]
    (target / "config.json").write_text(json.dumps(values))
    return target


def test_an_unknown_architecture_is_refused_naming_the_supported_ones(assets):
    bad = _config_copy(assets, "bad-arch", architectures=["GPT2LMHeadModel"])
    with pytest.raises(ValueError, match=r"config.json: key 'architectures' names "
                       r"'GPT2LMHeadModel'.*supported: LlamaForCausalLM, Mistral"):
        _validate("--model-config", str(bad / "config.json"))


def test_a_config_without_a_required_key_is_refused(assets):
    bad = _config_copy(assets, "bad-key", num_attention_heads=None)
    with pytest.raises(ValueError, match=r"config.json: the required key "
                       r"'num_attention_heads' is missing"):
        _validate("--model-config", str(bad / "config.json"))


def test_weights_of_another_shape_are_refused_naming_both_shapes(assets):
    bad = _config_copy(assets, "bad-shape", intermediate_size=48)
    with pytest.raises(ValueError, match=r"tensor 'model.layers.0.mlp.gate_proj.weight' has "
                       r"shape \[64, 32\] in model.safetensors, but the model config makes it "
                       r"\[48, 32\]"):
        _validate("--init-from", str(bad))


def test_a_missing_tensor_is_refused(assets):
    bad = _config_copy(assets, "bad-missing")
    tensors = load_file(bad / "model.safetensors")
    del tensors["model.layers.1.self_attn.k_proj.weight"]
    save_file(tensors, bad / "model.safetensors", metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"tensor 'model.layers.1.self_attn.k_proj.weight' "
                       r"\(shape \[16, 32\]\) .* is in no safetensors file"):
        _validate("--init-from", str(bad))


def test_a_missing_shard_is_refused_naming_it(assets):
    bad = assets / "bad-shard"
    shutil.copytree(assets / "llama-sharded", bad)
    index = json.loads((bad / "model.safetensors.index.json").read_text())
    missing = sorted(set(index["weight_map"].values()))[-1]
    (bad / missing).unlink()
    with pytest.raises(ValueError, match=rf"index.json: shard file '{missing}' is missing"):
        _validate("--init-from", str(bad))


def test_a_tokenizer_larger_than_the_vocabulary_is_refused(assets):
    bad = _config_copy(assets, "bad-vocab", vocab_size=300)
    with pytest.raises(ValueError, match=r"tokenizer .*tokenizer.json: its vocabulary has 384 "
                       r"tokens, more than the key 'vocab_size' 300 of model config"):
        _validate("--model-config", str(bad / "config.json"),
                  "--tokenizer", str(assets / "tokenizer.json"))


def test_tp_must_divide_the_key_value_heads(assets):
    with pytest.raises(ValueError, match=r"key 'num_key_value_heads' 2: tp 4 must divide it"):
        _validate("--init-from", str(assets / "llama"), "--set", "tp=4", "--batch-size", "4",
                  world_size=4)


def test_hugging_face_flags_without_a_hugging_face_model_are_refused(assets):
    for flags in (["--export-hf", "out"], ["--tokenizer", str(assets / "tokenizer.json")]):
        with pytest.raises(ValueError, match=rf"{flags[0]} applies to a Hugging Face model"):
            _validate("--preset", "tiny", *flags)
    with pytest.raises(ValueError, match="sequence_parallel is implemented for the GPT only"):
        _validate("--init-from", str(assets / "llama"), "--set", "tp=2", "--batch-size", "4",
                  "--set", "sequence_parallel=true", world_size=2)


def test_the_cli_exits_2_with_one_error_event_and_writes_nothing(assets, tmp_path):
    bad = _config_copy(assets, "bad-cli", intermediate_size=48)
    out = tmp_path / "export"
    result = train(["--init-from", str(bad), "--strategy", "single", "--steps", "1",
                    "--export-hf", str(out), "--checkpoint-dir", str(tmp_path / "ckpt")])
    assert result.returncode == 2, result.stderr
    (error,) = result.of("error")
    assert error["severity"] == "ERROR"
    assert "'model.layers.0.mlp.gate_proj.weight' has shape [64, 32]" in error["message"]
    assert not out.exists() and not (tmp_path / "ckpt").exists()
