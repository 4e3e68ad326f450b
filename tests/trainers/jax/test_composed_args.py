"""What the composer writes for a tpu_jax job is a command line the JAX trainer accepts, with a
mesh that fits the chips of the slice and the model of the preset."""

from __future__ import annotations

from typing import Any

import pytest

from trainers.jax.config import mesh_shape, validate
from trainers.jax.train import build_parser, config_from_args
from vertexplan import composer

pytestmark = pytest.mark.trainers

V5E_2X2 = {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "2x2"}
V6E_2X4 = {"machine_type": "ct6e-standard-8t", "tpu_topology": "2x4"}


@pytest.mark.parametrize(("fields", "chips", "mesh"), [
    ({"chief": V5E_2X2}, 4, (4, 1, 1)),
    ({"chief": V6E_2X4, "tpu": {"sharding": "fsdp"}}, 8, (1, 8, 1)),
    ({"chief": V6E_2X4, "parallelism": {"tensor": 2}, "precision": "bf16",
      "batch": {"global_batch_size": 32}}, 8, (4, 1, 2)),
])
def test_the_composed_arguments_configure_the_jax_trainer(fields: dict[str, Any], chips: int,
                                                          mesh: tuple[int, int, int]) -> None:
    request = composer.JobRequest.from_dict({"name": "jax", "strategy": "tpu_jax", **fields})
    result = composer.compose(request)
    assert result.ok, result.errors
    assert result.world_size == chips
    container = result.custom_job["jobSpec"]["workerPoolSpecs"][0]["containerSpec"]
    args = build_parser().parse_args(container["args"])
    config = config_from_args(args, env={})
    validate(config, chips)  # raises when the mesh or the batch does not fit
    shape = mesh_shape(config, chips)
    assert (shape.data, shape.fsdp, shape.tensor) == mesh
    if "batch" in fields:
        assert config.batch_size == fields["batch"]["global_batch_size"]
    if "precision" in fields:
        assert config.precision == fields["precision"]
