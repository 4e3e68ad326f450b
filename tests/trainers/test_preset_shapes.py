"""The model shapes the trainer ships (trainers/torch/models/shapes/) and the presets that train
them: a shape's name reaches its config.json, transformers builds each at its published
parameter count, and each preset's `model` section (what the memory plan and the cost read)
describes the model its composed command builds, at full size and scaled down. The trainer
accepts each preset's composed command at the preset's own world size.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
import torch
from transformers import AutoModelForCausalLM

from trainers.torch.main import build_parser, config_from_args
from trainers.torch.model import GPT
from trainers.torch.models import hf_config
from trainers.torch.validation import validate
from vertexplan import composer, presets

pytestmark = pytest.mark.trainers

# The models' own published counts (their model cards and safetensors indexes).
PUBLISHED = {"llama-3-8b": 8_030_261_248, "llama-3-70b": 70_553_706_496,
             "qwen3-8b": 8_190_735_360, "gemma-2b": 2_506_172_416}
LLAMA_PRESETS = ("llama3-8b-tp2-fsdp4-a100", "llama3-70b-tp8-pp2-dp2-h100")


def transformers_parameters(spec: hf_config.ModelSpec) -> int:
    """transformers' own count of the model the config builds (on the meta device: no memory)."""
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(spec.transformers_config())
    return sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_a_shape_by_name_is_the_published_model(name: str) -> None:
    spec = hf_config.read_spec(name)
    assert spec.path.endswith(f"shapes/{name}.json")
    assert transformers_parameters(spec) == PUBLISHED[name]


def test_an_unknown_bare_name_is_refused_naming_the_shapes() -> None:
    with pytest.raises(ValueError, match="neither a file nor a shipped model shape "
                                         r"\(gemma-2b, llama-3-70b"):
        hf_config.read_spec("llama-4-8b")


def composed(request: dict[str, Any]) -> tuple[list[str], dict[str, str], int]:
    """The chief's arguments and environment as the composer writes them, and the world size."""
    result = composer.compose(composer.JobRequest.from_dict(request))
    assert result.ok, result.errors
    spec = result.custom_job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    return spec["args"], {e["name"]: e["value"] for e in spec.get("env", [])}, result.world_size


@pytest.mark.parametrize("scaled", [False, True], ids=["full", "scaled-down"])
@pytest.mark.parametrize("slug", LLAMA_PRESETS)
def test_a_llama_preset_describes_the_model_its_command_builds(slug: str, scaled: bool) -> None:
    preset = presets.get(slug)
    request = preset.scaled_down() if scaled else preset.job_request()
    args, env, world = composed(request)
    config = config_from_args(build_parser().parse_args(args), env)
    validate(config, world)  # the trainer takes the command at the preset's degrees
    spec = hf_config.read_spec(config.hf_config)
    model = request["model"]
    assert (model["hidden_size"], model["layers"], model["attention_heads"],
            model["kv_heads"], model["intermediate_size"], model["vocab_size"],
            model["sequence_length"]) == (
        spec.hidden_size, spec.n_layer, spec.n_head, spec.n_kv_head,
        spec.values["intermediate_size"], spec.vocab_size, config.model.block_size)
    assert model["parameters"] == pytest.approx(transformers_parameters(spec), rel=0.01)
    # Scaled down: the same architecture, degrees and ratio of query to key/value heads.
    full = hf_config.read_spec(config_from_args(
        build_parser().parse_args(composed(preset.job_request())[0]), env).hf_config)
    assert spec.architecture == full.architecture
    assert spec.n_head // spec.n_kv_head == full.n_head // full.n_kv_head
    assert json.loads(env["CP_PARALLELISM_JSON"]) == json.loads(
        composed(preset.job_request())[1]["CP_PARALLELISM_JSON"])


def test_the_scaled_down_gpt_preset_describes_its_gpt() -> None:
    request = presets.get("tpu-v5e-2x2-xla-fsdp-spot").scaled_down()
    config = config_from_args(build_parser().parse_args(request["args"]), {})
    gpt = GPT(config.model, seed=0)
    assert request["model"]["parameters"] == sum(p.numel() for p in gpt.parameters())
    assert (request["model"]["layers"], request["model"]["hidden_size"]) == (
        config.model.n_layer, config.model.n_embd)
