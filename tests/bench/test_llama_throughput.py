"""The Llama throughput bench's models: each shipped shape scaled to a CPU size keeps its
architecture, head dimension and its ratios of query to key/value heads and MLP to width."""

from __future__ import annotations

import pytest
import torch
from transformers import CONFIG_MAPPING, AutoModelForCausalLM

from bench import llama_throughput
from trainers.torch.models import hf_config

pytestmark = pytest.mark.trainers


@pytest.mark.parametrize("shape", sorted(llama_throughput.ROWS))
def test_a_row_is_its_shape_scaled_to_tens_of_millions_of_parameters(shape: str) -> None:
    full = hf_config.read_spec(shape).values
    config = llama_throughput.scaled_config(shape, *llama_throughput.ROWS[shape])
    assert config["architectures"] == full["architectures"]
    for values in (full, config):
        values["head_dim"] = values["hidden_size"] // values["num_attention_heads"]
    assert config["head_dim"] == full["head_dim"]
    assert (config["num_attention_heads"] // config["num_key_value_heads"]
            == full["num_attention_heads"] // full["num_key_value_heads"])
    assert config["intermediate_size"] / config["hidden_size"] == pytest.approx(
        full["intermediate_size"] / full["hidden_size"], rel=0.05)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(
            CONFIG_MAPPING[config["model_type"]].from_dict(config))
    assert 20e6 < sum(p.numel() for p in model.parameters()) < 50e6
