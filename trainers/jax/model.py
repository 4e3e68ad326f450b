"""The byte-level GPT of trainers/torch/model.py, in Flax: the same shape, parameters and initial
distribution (GPT-2 init: N(0, 0.02), residual projections N(0, 0.02/sqrt(2 n_layer)), zero
biases, unit norms; tied input and output embeddings; exact GELU; pre-layer-norm).

Every parameter carries logical axis names (MaxText's way): `embed`, `heads`, `head_dim`,
`mlp`, `vocab`, `position`, `norm`. trainers/jax/mesh.py maps them to the mesh axes, so the
model says what its dimensions are and the job says how they are split.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
from flax import linen as nn

from trainers.config import ModelConfig

PARAM_DTYPE = jnp.float32  # parameters and optimizer state stay fp32 whatever the arithmetic
LN_EPS = 1e-5  # torch.nn.LayerNorm's


def _normal(std: float, axes: tuple[str, ...]) -> nn.initializers.Initializer:
    return nn.with_logical_partitioning(nn.initializers.normal(stddev=std), axes)


def _zeros(axes: tuple[str, ...]) -> nn.initializers.Initializer:
    return nn.with_logical_partitioning(nn.initializers.zeros_init(), axes)


def _layer_norm(config: ModelConfig, dtype: jnp.dtype, name: str) -> nn.LayerNorm:
    return nn.LayerNorm(
        epsilon=LN_EPS,
        use_bias=config.bias,
        dtype=dtype,
        param_dtype=PARAM_DTYPE,
        scale_init=nn.with_logical_partitioning(nn.initializers.ones_init(), ("norm",)),
        bias_init=_zeros(("norm",)),
        name=name,
    )


class CausalSelfAttention(nn.Module):
    config: ModelConfig
    dtype: jnp.dtype

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        c = self.config
        head_dim = c.n_embd // c.n_head
        residual_std = 0.02 / math.sqrt(2 * c.n_layer)

        def project(name: str) -> jax.Array:
            # (batch, length, heads, head_dim): heads are what tensor parallelism splits.
            return nn.DenseGeneral(
                (c.n_head, head_dim),
                use_bias=c.bias,
                dtype=self.dtype,
                param_dtype=PARAM_DTYPE,
                kernel_init=_normal(0.02, ("embed", "heads", "head_dim")),
                bias_init=_zeros(("heads", "head_dim")),
                name=name,
            )(x)

        q, k, v = project("q"), project("k"), project("v")
        y = jax.nn.dot_product_attention(q, k, v, is_causal=True)
        return nn.DenseGeneral(
            c.n_embd,
            axis=(-2, -1),
            use_bias=c.bias,
            dtype=self.dtype,
            param_dtype=PARAM_DTYPE,
            kernel_init=_normal(residual_std, ("heads", "head_dim", "embed")),
            bias_init=_zeros(("embed",)),
            name="proj",
        )(y)


class MLP(nn.Module):
    config: ModelConfig
    dtype: jnp.dtype

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        c = self.config
        hidden = nn.Dense(
            4 * c.n_embd,
            use_bias=c.bias,
            dtype=self.dtype,
            param_dtype=PARAM_DTYPE,
            kernel_init=_normal(0.02, ("embed", "mlp")),
            bias_init=_zeros(("mlp",)),
            name="fc",
        )(x)
        hidden = nn.gelu(hidden, approximate=False)  # torch's F.gelu default
        return nn.Dense(
            c.n_embd,
            use_bias=c.bias,
            dtype=self.dtype,
            param_dtype=PARAM_DTYPE,
            kernel_init=_normal(0.02 / math.sqrt(2 * c.n_layer), ("mlp", "embed")),
            bias_init=_zeros(("embed",)),
            name="proj",
        )(hidden)


class Block(nn.Module):
    config: ModelConfig
    dtype: jnp.dtype

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = x + CausalSelfAttention(self.config, self.dtype, name="attn")(
            _layer_norm(self.config, self.dtype, "ln_1")(x)
        )
        return x + MLP(self.config, self.dtype, name="mlp")(
            _layer_norm(self.config, self.dtype, "ln_2")(x)
        )


# How each activation checkpointing mode rematerialises a block (`jax.checkpoint`'s policy):
# full saves nothing (the block's input is what the caller keeps); selective saves the outputs
# of the projections, matrix products without batch dimensions, and recomputes the attention
# (whose products have batch and head dimensions), the norms and the activations.
REMAT_POLICIES = {
    "full": None,
    "selective": jax.checkpoint_policies.dots_with_no_batch_dims_saveable,
}


def block_class(activation_checkpointing: str) -> type[nn.Module]:
    """The block as the mode runs it; `nn.remat` keeps the block's parameter names."""
    if activation_checkpointing == "none":
        return Block
    return nn.remat(Block, policy=REMAT_POLICIES[activation_checkpointing])


class GPT(nn.Module):
    """Tokens (batch, length) int32 -> logits (batch, length, vocab) in the compute dtype."""

    config: ModelConfig
    dtype: jnp.dtype = jnp.float32  # the arithmetic: bfloat16 on TPU and GPU
    activation_checkpointing: str = "none"  # none | selective | full (REMAT_POLICIES)

    @nn.compact
    def __call__(self, idx: jax.Array) -> jax.Array:
        c = self.config
        length = idx.shape[1]
        if length > c.block_size:
            raise ValueError(f"sequence of {length} > block_size {c.block_size}")
        wte = nn.Embed(
            c.vocab_size,
            c.n_embd,
            dtype=self.dtype,
            param_dtype=PARAM_DTYPE,
            embedding_init=_normal(0.02, ("vocab", "embed")),
            name="wte",
        )
        wpe = nn.Embed(
            c.block_size,
            c.n_embd,
            dtype=self.dtype,
            param_dtype=PARAM_DTYPE,
            embedding_init=_normal(0.02, ("position", "embed")),
            name="wpe",
        )
        x = wte(idx) + wpe(jnp.arange(length))  # positions broadcast over the batch
        block = block_class(self.activation_checkpointing)
        for i in range(c.n_layer):
            x = block(c, self.dtype, name=f"blocks_{i}")(x)
        x = _layer_norm(c, self.dtype, "ln_f")(x)
        return wte.attend(x)  # the output head is the input embedding (tied)


def lm_loss(logits: jax.Array, targets: jax.Array) -> jax.Array:
    """Mean next-byte cross-entropy, in fp32 whatever the logits' precision."""
    logp = jax.nn.log_softmax(logits.astype(jnp.float32), axis=-1)
    picked = jnp.take_along_axis(logp, targets[..., None], axis=-1)[..., 0]
    return -picked.mean()
