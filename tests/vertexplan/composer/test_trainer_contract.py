"""What the composer writes is what the built-in trainer reads (trainers/torch/main.py's flags and
its DeepSpeed checks), so a composed job never fails on its own configuration."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from tests.vertexplan.composer.helpers import A100_8, compose_request, env_of, job, pools

CASES = {
    "zero2-offload": job(strategy="zero2", chief=dict(A100_8), workers={"replica_count": 3},
                         precision="bf16", batch={"global_batch_size": 128, "micro_batch_size": 2},
                         deepspeed={"gradient_clipping": 0.5, "offload_optimizer": True,
                                    "zero": {"overlap_comm": True}}),
    "zero3-offload-all": job(strategy="zero3", chief=dict(A100_8),
                             deepspeed={"offload_optimizer": True, "offload_params": True}),
    "zero1-plain": job(strategy="zero1", chief=dict(A100_8), batch={"micro_batch_size": 4}),
    "fsdp-hybrid": job(strategy="fsdp", chief=dict(A100_8), workers={"replica_count": 1},
                       fsdp={"mode": "hybrid_shard", "shard_size": 8}),
}


@pytest.mark.trainers
@pytest.mark.parametrize("name", CASES)
def test_the_built_in_trainer_accepts_the_composed_configuration(name: str) -> None:
    from trainers.torch import main as train
    from trainers.torch.config import ZERO_STAGES, fsdp_from_json
    from trainers.torch.strategies import deepspeed_config
    from trainers.torch.validation import validate

    result = compose_request(CASES[name])
    assert result.ok, result.errors
    chief = pools(result.custom_job)[0]
    env = env_of(chief)
    args = train.build_parser().parse_args(chief["containerSpec"]["args"])
    config = train.config_from_args(args, {})
    # The trainer side of the contract: the generated config files arrive in the environment.
    if "CP_DEEPSPEED_CONFIG_JSON" in env:
        ds: dict[str, Any] = json.loads(env["CP_DEEPSPEED_CONFIG_JSON"])
        config = replace(config, deepspeed=ds)
        assert {k: getattr(config, k) for k in deepspeed_config.defaults_from(ds)} == \
            deepspeed_config.defaults_from(ds), "the flags and the JSON agree"
    if "CP_FSDP_CONFIG_JSON" in env:
        assert fsdp_from_json(json.loads(env["CP_FSDP_CONFIG_JSON"])) == config.fsdp
    validate(config, result.world_size)
    if config.strategy in ZERO_STAGES:
        built = deepspeed_config.build(config, result.world_size, ZERO_STAGES[config.strategy])
        assert built["zero_optimization"]["stage"] == ZERO_STAGES[config.strategy]
