"""The device mesh (data, fsdp, tensor) and how the model's logical axes map onto it.

- data: replicas of the whole model, each on its own rows of the batch.
- fsdp: the batch rows are split over it too, and so is every parameter's `embed` dimension
  (and with it the optimizer state): ZeRO-3 / FSDP, gathered by XLA where a layer needs it.
- tensor: attention heads, the MLP's hidden units and the vocabulary are split over it
  (Megatron's column- then row-parallel pairs); XLA inserts the reductions.

The degrees multiply to the number of devices of the job (all hosts). `jax.jit` with these
shardings replaces `pmap`/`pjit`: the same program runs whatever the mesh, which is why the loss
must not depend on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

AXES = ("data", "fsdp", "tensor")
BATCH_AXES = ("data", "fsdp")

# Logical axis -> mesh axis (None: replicated).
LOGICAL_RULES: tuple[tuple[str, str | tuple[str, ...] | None], ...] = (
    ("batch", BATCH_AXES),
    ("embed", "fsdp"),
    ("heads", "tensor"),
    ("mlp", "tensor"),
    ("vocab", "tensor"),
    ("head_dim", None),
    ("position", None),
    ("norm", None),
)


@dataclass(frozen=True)
class MeshShape:
    data: int
    fsdp: int
    tensor: int

    @property
    def devices(self) -> int:
        return self.data * self.fsdp * self.tensor

    @property
    def batch_shards(self) -> int:
        return self.data * self.fsdp

    def as_dict(self) -> dict[str, int]:
        return {"data": self.data, "fsdp": self.fsdp, "tensor": self.tensor}

    def __str__(self) -> str:
        return f"{self.data},{self.fsdp},{self.tensor}"


def parse_mesh(text: str) -> tuple[int, int, int]:
    """"2,2,2" -> (2, 2, 2); a 0 data degree means "the devices left" (resolved later)."""
    parts = [p.strip() for p in text.replace("x", ",").split(",")]
    if len(parts) != len(AXES) or not all(p.isdigit() for p in parts):
        raise ValueError(f"mesh {text!r}: expected three degrees data,fsdp,tensor (e.g. 2,2,2)")
    data, fsdp, tensor = (int(p) for p in parts)
    return data, fsdp, tensor


def resolve_mesh(data: int, fsdp: int, tensor: int, device_count: int) -> MeshShape:
    """The degrees for `device_count` devices; data=0 takes what fsdp and tensor leave."""
    if fsdp < 1 or tensor < 1 or data < 0:
        raise ValueError(f"mesh degrees must be positive (data may be 0 = the rest): "
                         f"data={data} fsdp={fsdp} tensor={tensor}")
    if data == 0:
        if device_count % (fsdp * tensor):
            raise ValueError(f"fsdp x tensor = {fsdp * tensor} does not divide the "
                             f"{device_count} devices")
        data = device_count // (fsdp * tensor)
    shape = MeshShape(data, fsdp, tensor)
    if shape.devices != device_count:
        raise ValueError(f"mesh {shape} holds {shape.devices} devices, the job has "
                         f"{device_count}: the degrees must multiply to the device count")
    return shape


def fit_problems(
    shape: MeshShape, n_embd: int, n_head: int, vocab_size: int, batch_size: int
) -> list[str]:
    """What in the model or batch the mesh cannot split evenly."""
    problems = []
    if batch_size % shape.batch_shards:
        problems.append(f"batch_size {batch_size} must be a multiple of data x fsdp = "
                        f"{shape.batch_shards}")
    if n_embd % shape.fsdp:
        problems.append(f"model.n_embd {n_embd} must be a multiple of fsdp {shape.fsdp}")
    for name, size in (("model.n_head", n_head), ("model.vocab_size", vocab_size),
                       ("4 x model.n_embd", 4 * n_embd)):
        if size % shape.tensor:
            problems.append(f"{name} {size} must be a multiple of tensor {shape.tensor}")
    return problems


def build_mesh(shape: MeshShape, devices: Sequence[jax.Device] | None = None) -> Mesh:
    """The mesh over every device of the job. On TPU, mesh_utils orders the devices so that
    the inner axes (tensor, then fsdp) run along the chips' fastest links."""
    devices = list(jax.devices() if devices is None else devices)
    dims = (shape.data, shape.fsdp, shape.tensor)
    try:
        from jax.experimental import mesh_utils

        grid = mesh_utils.create_device_mesh(dims, devices=devices)
    except (ValueError, NotImplementedError, AssertionError):
        # Device kinds without a known physical layout (CPU): any order is as good.
        grid = np.asarray(devices, dtype=object).reshape(dims)
    return Mesh(grid, AXES)


def batch_sharding(mesh: Mesh) -> NamedSharding:
    """(batch, length) arrays: rows split over data x fsdp, replicated over tensor."""
    return NamedSharding(mesh, PartitionSpec(BATCH_AXES, None))


def replicated(mesh: Mesh) -> NamedSharding:
    return NamedSharding(mesh, PartitionSpec())
