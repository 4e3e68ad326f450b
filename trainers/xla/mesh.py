"""The SPMD device mesh of the XLA trainer: (data, fsdp) over every device of every host.

torch_xla's SPMD mode runs one process per host and lets the XLA compiler partition one
program over all devices, as `jax.jit` with shardings does:

* data: the global batch is split by rows across the data axis; parameters are replicated,
  and the compiler inserts the gradient all-reduce (DDP's arithmetic, without DDP).
* fsdp: every matrix is split by rows across the fsdp axis as well (ZeRO-3 / FSDP; the
  optimizer state follows its parameter); the compiler gathers a matrix where it is used.
  The batch is split over data x fsdp, so every device trains on its own rows.

The parsing below needs no torch_xla; `build` and the `shard_*` functions do.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

AXES = ("data", "fsdp")


@dataclass(frozen=True)
class MeshShape:
    data: int
    fsdp: int

    @property
    def devices(self) -> int:
        return self.data * self.fsdp

    def as_dict(self) -> dict[str, int]:
        return {"data": self.data, "fsdp": self.fsdp}


def parse_mesh(text: str) -> tuple[int, int]:
    """"2,4" -> (2, 4); data 0 means "the devices fsdp leaves" (resolved with the count)."""
    parts = [p.strip() for p in text.replace("x", ",").split(",")]
    if len(parts) != len(AXES) or not all(p.isdigit() for p in parts):
        raise ValueError(f"mesh {text!r}: expected two degrees data,fsdp (e.g. 2,4)")
    data, fsdp = (int(p) for p in parts)
    return data, fsdp


def resolve_mesh(data: int, fsdp: int, device_count: int) -> MeshShape:
    if fsdp < 1 or data < 0:
        raise ValueError(f"mesh degrees must be positive (data may be 0 = the rest): "
                         f"data={data} fsdp={fsdp}")
    if data == 0:
        if device_count % fsdp:
            raise ValueError(f"fsdp {fsdp} does not divide the {device_count} devices")
        data = device_count // fsdp
    shape = MeshShape(data, fsdp)
    if shape.devices != device_count:
        raise ValueError(f"mesh data={data} x fsdp={fsdp} holds {shape.devices} devices, the "
                         f"job has {device_count}: the degrees must multiply to the device "
                         "count")
    return shape


def build(shape: MeshShape) -> Any:
    """The torch_xla Mesh (SPMD mode must be on)."""
    import numpy as np
    import torch_xla.distributed.spmd as xs

    return xs.Mesh(np.arange(shape.devices), (shape.data, shape.fsdp), AXES)


def shard_parameters(model: Any, mesh: Any, shape: MeshShape) -> int:
    """Replicated over data; split by rows over fsdp where the rows divide. Returns how many
    parameters were split."""
    import torch_xla.distributed.spmd as xs

    split = 0
    for param in model.parameters():  # a tied parameter is listed (and marked) once
        if shape.fsdp > 1 and param.dim() >= 2 and param.shape[0] % shape.fsdp == 0:
            xs.mark_sharding(param, mesh, ("fsdp", *([None] * (param.dim() - 1))))
            split += 1
        else:
            xs.mark_sharding(param, mesh, tuple([None] * param.dim()))
    return split


def shard_batch(tensor: Any, mesh: Any) -> None:
    """Rows over data x fsdp: every device trains on its own slice of the global batch."""
    import torch_xla.distributed.spmd as xs

    xs.mark_sharding(tensor, mesh, (AXES, *([None] * (tensor.dim() - 1))))
