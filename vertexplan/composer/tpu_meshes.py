"""The TPU trainers' ``--mesh``: how the chips of a TPU job are laid out, from its
parallelism and its ``tpu.sharding``. Errors go to the job's Launch like every launch check."""

from __future__ import annotations

from typing import Any

from vertexplan.composer.launch import Launch


def jax_mesh(tpu: dict[str, Any], dp: int, t: int, p: int, out: Launch) -> str:
    """``--mesh DATA,FSDP,TENSOR`` for the JAX trainer over all the chips of the job: the
    tensor degree as the job's parallelism says, the rest data-parallel, or FSDP with
    tpu.sharding fsdp (parameters and optimizer state sharded over those chips)."""
    if p > 1:
        out.error("parallelism.pipeline", "the JAX trainer shards over a (data, fsdp, tensor) "
                  "mesh and has no pipeline stages: set pipeline to 1 and use tensor or "
                  "tpu.sharding fsdp", ("1",))
    if tpu.get("sharding") == "fsdp":
        return f"1,{dp},{t}"
    return f"{dp},1,{t}"


def xla_mesh(tpu: dict[str, Any], dp: int, t: int, p: int, out: Launch) -> str:
    """``--mesh DATA,FSDP`` for the PyTorch/XLA trainer's SPMD mesh over all the chips of the
    job: data-parallel, or FSDP with tpu.sharding fsdp."""
    for key, degree in (("parallelism.tensor", t), ("parallelism.pipeline", p)):
        if degree > 1:
            out.error(key, "the PyTorch/XLA trainer shards over a (data, fsdp) mesh, without "
                      "tensor or pipeline parallelism: set it to 1 and use tpu.sharding fsdp, "
                      "or strategy tpu_jax for a tensor axis", ("1",))
    if tpu.get("sharding") == "fsdp":
        return f"1,{dp * t * p}"
    return f"{dp * t * p},1"
