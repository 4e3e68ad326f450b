"""Rematerialised blocks (`jax.checkpoint`, trainers/jax/model.py) train exactly as plain ones:
the same parameter tree, loss and gradients in every mode, with less kept for backward (none >
selective > full); the flag reaches the config."""

from __future__ import annotations

import contextlib
import io
import math
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.ad_checkpoint import print_saved_residuals

from trainers.config import CHECKPOINTING_MODES, ModelConfig
from trainers.jax.config import validate
from trainers.jax.model import GPT, lm_loss
from trainers.jax.train import build_parser, config_from_args

pytestmark = pytest.mark.trainers

# Small, and every mode in one program: XLA's compilation, not the arithmetic, is the cost.
MODEL = ModelConfig(block_size=16, n_embd=32)


def test_every_mode_gives_the_same_loss_and_gradients_on_the_same_parameters():
    """Equal losses and gradients mean equal training. Each mode's gradient goes through its
    own rematerialisation (jax.checkpoint keeps the recomputation apart from the forward)."""
    tokens = np.random.default_rng(5).integers(0, 256, (4, MODEL.block_size + 1), np.int32)
    x, y = tokens[:, :-1], tokens[:, 1:]
    models = {mode: GPT(MODEL, jnp.float32, mode) for mode in CHECKPOINTING_MODES}
    trees = {mode: jax.eval_shape(m.init, jax.random.key(0), x)["params"]
             for mode, m in models.items()}
    for mode in CHECKPOINTING_MODES:  # nn.remat keeps every parameter's name and shape
        assert jax.tree.structure(trees[mode]) == jax.tree.structure(trees["none"])
    rng = np.random.default_rng(0)
    params = jax.tree.map(lambda s: rng.normal(0.0, 0.05, s.shape).astype(np.float32),
                          trees["none"])

    @jax.jit
    def every_mode(params):
        return {mode: jax.value_and_grad(lambda p, m=m: lm_loss(m.apply({"params": p}, x), y))(
            params) for mode, m in models.items()}

    results = every_mode(params)
    loss, grads = results["none"]
    for mode in ("selective", "full"):
        other_loss, other_grads = results[mode]
        assert float(other_loss) == pytest.approx(float(loss), rel=1e-6), mode
        for a, b in zip(jax.tree.leaves(grads), jax.tree.leaves(other_grads), strict=True):
            assert jnp.allclose(a, b, rtol=1e-5, atol=1e-7), mode


def _residual_bytes(loss_of, params) -> int:
    """The bytes the backward pass keeps from the forward (its residuals), the parameters
    themselves left out: what jax.ad_checkpoint.print_saved_residuals lists, added up."""
    listing = io.StringIO()
    with contextlib.redirect_stdout(listing):
        print_saved_residuals(loss_of, params)
    total = 0
    for line in listing.getvalue().splitlines():
        match = re.match(r"(bf16|f32|i32)\[([0-9,]*)\]", line)
        if match and "from the argument" not in line:
            size = 2 if match[1] == "bf16" else 4
            total += size * math.prod(int(d) for d in match[2].split(",") if d)
    return total


def test_each_mode_keeps_less_for_backward():
    tokens = np.zeros((4, MODEL.block_size), np.int32)
    kept = {}
    for mode in CHECKPOINTING_MODES:
        model = GPT(MODEL, jnp.float32, mode)
        params = jax.eval_shape(model.init, jax.random.key(0), tokens)["params"]
        params = jax.tree.map(lambda s: np.zeros(s.shape, np.float32), params)
        kept[mode] = _residual_bytes(
            lambda p, m=model: lm_loss(m.apply({"params": p}, tokens), tokens), params)
    assert kept["none"] > kept["selective"] > kept["full"] > 0


def test_the_flag_reaches_the_config():
    def parsed(*args: str):
        return config_from_args(build_parser().parse_args(list(args)), env={})

    assert parsed().activation_checkpointing == "none"
    for mode in CHECKPOINTING_MODES:
        assert parsed("--activation-checkpointing", mode).activation_checkpointing == mode
    assert parsed("--set", "activation_checkpointing=full").activation_checkpointing == "full"
    with pytest.raises(ValueError, match="activation_checkpointing must be one of none, "
                       "selective, full, not 'some'"):
        validate(parsed("--set", "activation_checkpointing=some"), 1)
