"""The compiled pieces of a run: the sharded initial state, the training step and the
evaluation step, for one model, optimizer and mesh.

State is `{"params": ..., "opt_state": ...}`, every leaf a global `jax.Array` laid out by the
logical axis rules of trainers/jax/mesh.py (the optimizer's moments take their parameter's
layout). The learning rate is an argument of the step, computed on the host by the schedule
that the PyTorch trainer uses, so a resumed run needs no schedule state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import linen as nn
from jax.sharding import Mesh, NamedSharding

from trainers.jax.config import JaxTrainConfig
from trainers.jax.mesh import LOGICAL_RULES, batch_sharding, replicated
from trainers.jax.model import GPT, lm_loss

State = dict[str, Any]
# Parameters that weight decay applies to, as in the PyTorch trainer: the matrices (linear
# kernels and embeddings), not biases and norms.
DECAYED_LEAVES = frozenset({"kernel", "embedding"})


def build_optimizer(config: JaxTrainConfig) -> optax.GradientTransformation:
    """AdamW without its learning rate (the step multiplies by it): clip, Adam, decoupled
    weight decay. p - lr * (adam + wd * p) is torch's AdamW update."""
    parts = [optax.clip_by_global_norm(config.grad_clip)] if config.grad_clip else []
    parts += [
        optax.scale_by_adam(b1=config.beta1, b2=config.beta2, eps=1e-8),
        optax.add_decayed_weights(config.weight_decay, mask=_decay_mask),
    ]
    return optax.chain(*parts)


def _decay_mask(params: Any) -> Any:
    def decayed(path: tuple, _leaf: Any) -> bool:
        return any(getattr(key, "key", None) in DECAYED_LEAVES for key in path)

    return jax.tree_util.tree_map_with_path(decayed, params)


def compute_dtype(precision: str, platform: str) -> jnp.dtype:
    """bf16 arithmetic where the device has it (auto), or as asked."""
    if precision == "bf16" or (precision == "auto" and platform in ("tpu", "gpu", "cuda")):
        return jnp.bfloat16
    return jnp.float32


@dataclass(frozen=True)
class Program:
    mesh: Mesh
    model: GPT
    shardings: State  # NamedSharding per state leaf
    abstract: State  # ShapeDtypeStruct per state leaf, with its sharding (restore target)
    batch: NamedSharding
    init: Callable[[jax.Array], State]
    train_step: Callable[[State, jax.Array, jax.Array, np.ndarray], tuple[State, jax.Array]]
    eval_step: Callable[[Any, jax.Array, jax.Array], jax.Array]

    def parameter_count(self) -> int:
        return sum(leaf.size for leaf in jax.tree.leaves(self.abstract["params"]))


def build_program(config: JaxTrainConfig, mesh: Mesh, dtype: jnp.dtype) -> Program:
    model = GPT(config.model, dtype, config.activation_checkpointing)
    tx = build_optimizer(config)
    example = jnp.zeros((1, config.model.block_size), jnp.int32)

    def boxed_state(key: jax.Array) -> State:
        params = model.init(key, example)["params"]  # leaves boxed with their logical axes
        return {"params": params, "opt_state": tx.init(params)}

    boxed = jax.eval_shape(boxed_state, jax.random.key(0))
    specs = nn.get_partition_spec(boxed)
    shardings = nn.logical_to_mesh_sharding(specs, mesh, LOGICAL_RULES)
    abstract = jax.tree.map(
        lambda leaf, sharding: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=sharding),
        nn.unbox(boxed),
        shardings,
    )
    batch = batch_sharding(mesh)
    scalar = replicated(mesh)

    # Each device computes its own shards of the initial state; with threefry's partitionable
    # keys (jax's default) the values do not depend on the mesh.
    init = jax.jit(lambda key: nn.unbox(boxed_state(key)), out_shardings=shardings)

    def loss_of(params: Any, x: jax.Array, y: jax.Array) -> jax.Array:
        return lm_loss(model.apply({"params": params}, x), y)

    def train_step(
        state: State, x: jax.Array, y: jax.Array, lr: jax.Array
    ) -> tuple[State, jax.Array]:
        loss, grads = jax.value_and_grad(loss_of)(state["params"], x, y)
        updates, opt_state = tx.update(grads, state["opt_state"], state["params"])
        params = jax.tree.map(lambda p, u: p - lr * u, state["params"], updates)
        return {"params": params, "opt_state": opt_state}, loss

    return Program(
        mesh=mesh,
        model=model,
        shardings=shardings,
        abstract=abstract,
        batch=batch,
        init=init,
        train_step=jax.jit(
            train_step,
            in_shardings=(shardings, batch, batch, scalar),
            out_shardings=(shardings, scalar),
            donate_argnums=0,  # the old state's buffers hold the new one
        ),
        eval_step=jax.jit(
            loss_of, in_shardings=(shardings["params"], batch, batch), out_shardings=scalar
        ),
    )


def device_batch(sharding: NamedSharding, host: np.ndarray) -> jax.Array:
    """A global (batch, length) array from the whole batch every host holds: each host fills
    only the shards of its own devices."""
    return jax.make_array_from_callback(host.shape, sharding, lambda index: host[index])
