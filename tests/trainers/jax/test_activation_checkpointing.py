"""Rematerialised blocks (`jax.checkpoint`, trainers/jax/model.py) train exactly as plain ones:
the same parameter tree, loss and gradients in every mode; the flag reaches the config."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from trainers.config import CHECKPOINTING_MODES, ModelConfig
from trainers.jax.config import validate
from trainers.jax.model import GPT, lm_loss
from trainers.jax.train import build_parser, config_from_args

pytestmark = pytest.mark.trainers

# Small enough that compiling each mode's program stays a few seconds on the shared CPUs.
MODEL = ModelConfig(block_size=16, n_embd=32)


def test_every_mode_gives_the_same_loss_and_gradients_on_the_same_parameters():
    """One program per mode, each compiled on its own (as a run compiles it): equal losses and
    gradients mean equal training."""
    tokens = jax.random.randint(jax.random.key(5), (4, MODEL.block_size + 1), 0, 256)
    x, y = tokens[:, :-1], tokens[:, 1:]
    params = jax.jit(GPT(MODEL, jnp.float32).init)(jax.random.key(0), x)["params"]
    results = {}
    for mode in CHECKPOINTING_MODES:
        model = GPT(MODEL, jnp.float32, mode)
        shapes = jax.eval_shape(model.init, jax.random.key(0), x)["params"]
        assert jax.tree.structure(shapes) == jax.tree.structure(params)  # remat keeps names
        loss_of = jax.value_and_grad(lambda p, m=model: lm_loss(m.apply({"params": p}, x), y))
        results[mode] = jax.jit(loss_of)(params)
    loss, grads = results["none"]
    for mode in ("selective", "full"):
        other_loss, other_grads = results[mode]
        assert float(other_loss) == pytest.approx(float(loss), rel=1e-6), mode
        for a, b in zip(jax.tree.leaves(grads), jax.tree.leaves(other_grads), strict=True):
            assert jnp.allclose(a, b, rtol=1e-5, atol=1e-7), mode


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
