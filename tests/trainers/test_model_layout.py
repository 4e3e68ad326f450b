"""The GPT's layout for tensor and pipeline parallelism: separate q, k, v (split by heads), blocks
named by index so pipeline stages keep the full model's parameter names, and models saved with
the earlier fused `qkv` projection still load."""

from __future__ import annotations

import pytest
import torch

from trainers.config import ModelConfig
from trainers.torch.model import GPT, GPTStage, lm_loss

pytestmark = pytest.mark.trainers

CONFIG = ModelConfig(n_layer=4)


def _batch() -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    x = torch.randint(0, 256, (2, CONFIG.block_size), generator=gen)
    return x, torch.roll(x, -1, dims=1)


def test_a_fused_qkv_state_dict_loads_into_the_split_projections():
    model = GPT(CONFIG, seed=3)
    fused = {}
    for key, value in model.state_dict().items():
        if ".attn.k." in key or ".attn.v." in key:
            continue
        if ".attn.q." in key:
            kind = key.rsplit(".", 1)[1]
            prefix = key.removesuffix(f"q.{kind}")
            parts = [model.state_dict()[f"{prefix}{n}.{kind}"] for n in "qkv"]
            fused[f"{prefix}qkv.{kind}"] = torch.cat(parts)
        else:
            fused[key] = value
    loaded = GPT(CONFIG, seed=99)
    loaded.load_state_dict(fused)  # strict
    x, y = _batch()
    assert torch.equal(loaded(x, y)[1], model(x, y)[1])


def test_pipeline_stages_keep_the_full_models_names_and_compute_it_in_turn():
    model = GPT(CONFIG, seed=3)
    first = GPTStage(CONFIG, 3, layers=range(0, 2), first=True, last=False)
    last = GPTStage(CONFIG, 3, layers=range(2, 4), first=False, last=True)
    names = set(dict(first.named_parameters())) | set(dict(last.named_parameters()))
    assert names == set(model.state_dict())  # lm_head.weight: the last stage's tied copy
    assert "blocks.3.attn.q.weight" in dict(last.named_parameters())
    x, y = _batch()
    assert torch.allclose(lm_loss(last(first(x)), y), model(x, y)[1])
