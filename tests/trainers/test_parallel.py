"""Parallel degrees, strategy options and the DeepSpeed/FSDP config files are checked before
anything starts, with messages that say what to change."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from tests.trainers.replicas import train
from trainers.job.cluster import Process
from trainers.torch import strategies
from trainers.torch.config import FSDPConfig, TrainConfig, fsdp_from_json
from trainers.torch.main import build_parser, config_from_args
from trainers.torch.parallel import hybrid_mesh_shape, resolve_dims
from trainers.torch.strategies import deepspeed_config
from trainers.torch.validation import validate

pytestmark = pytest.mark.trainers


def world(size: int, local: int = 1) -> Process:
    return Process(0, size, 0, local, "127.0.0.1", 29500, "env")


def test_dp_is_what_tp_and_pp_leave():
    assert resolve_dims(0, 1, 1, 8).dp == 8
    assert resolve_dims(8, 1, 1, 8).world_size == 8


@pytest.mark.parametrize(
    "dp, tp, pp, world_size, message",
    [
        (0, 3, 1, 8, "WORLD_SIZE 8 is not a multiple of tp 3 x pp 1 = 3"),
        (4, 1, 1, 8, "dp 4 x tp 1 x pp 1 = 4, but WORLD_SIZE is 8"),
        (0, 0, 1, 8, "tp must be >= 1"),
        (-1, 1, 1, 8, "dp must be >= 1"),
    ],
)
def test_degrees_that_do_not_fit_are_refused(dp, tp, pp, world_size, message):
    with pytest.raises(ValueError, match=message):
        resolve_dims(dp, tp, pp, world_size)
    with pytest.raises(ValueError, match=message):
        validate(TrainConfig(dp=dp, tp=tp, pp=pp, batch_size=8), world_size)


@pytest.mark.parametrize(
    "overrides, world_size, message",
    [
        ({"tp": 4}, 4, r"tp 4 must divide model.n_head 2 .*use tp in 1, 2"),
        ({"tp": 3}, 3, r"tp 3 must divide model.n_head 2"),
        ({"pp": 4}, 4, r"model.n_layer 2 must be a multiple of pp 4 x pp_virtual_stages 1 = 4"),
        (
            {"pp": 2, "pp_virtual_stages": 2, "pp_schedule": "interleaved_1f1b"},
            2,
            r"model.n_layer 2 must be a multiple of pp 2 x pp_virtual_stages 2 = 4",
        ),
        ({"pp": 2, "pp_schedule": "zero_bubble"}, 2, r"pp_schedule 'zero_bubble': use one of"),
        (
            {"pp": 2, "pp_virtual_stages": 2},
            2,
            r"pp_schedule 1f1b runs one stage per pipeline rank, but pp_virtual_stages is 2",
        ),
        (
            {"pp": 2, "micro_batch_size": 8},
            1,
            r"pp_schedule 1f1b needs at least as many micro-batches as pipeline stages \(2\)",
        ),
        ({"pp": 2, "micro_batch_size": 3}, 2, r"set micro_batch_size to a divisor of 8"),
        ({"sequence_parallel": True}, 2, r"sequence_parallel .* needs tp > 1"),
    ],
)
def test_degrees_are_checked_against_the_model(overrides, world_size, message):
    config = TrainConfig(batch_size=8, **overrides)
    world_size = max(world_size, config.tp * config.pp)
    with pytest.raises(ValueError, match=message):
        validate(config, world_size)


def test_model_parallel_degrees_that_fit_pass():
    validate(TrainConfig(batch_size=8, tp=2, pp=2), 8)
    validate(TrainConfig(batch_size=8, tp=2, sequence_parallel=True), 2)
    four = TrainConfig(batch_size=8, pp=2, pp_virtual_stages=2, pp_schedule="interleaved_1f1b")
    validate(replace(four, model=replace(four.model, n_layer=4)), 2)
    validate(TrainConfig(batch_size=8, pp=2, pp_schedule="gpipe", micro_batch_size=8), 2)


def test_model_parallel_degree_is_a_configuration_error_before_any_process_group():
    # Rank 0 of 4 with nobody listening: it must exit before trying to connect.
    result = train(
        ["--set", "tp=4"],
        timeout=60,
        RANK="0",
        WORLD_SIZE="4",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT="9",
    )
    assert result.returncode == 2
    assert "tp 4 must divide model.n_head 2" in result.one("error")["message"]


@pytest.mark.parametrize(
    "config, world_size, message",
    [
        (TrainConfig(strategy="zero2", tp=2), 2, r"zero2 with tp 2 x pp 1 is refused: DeepSpeed"),
        (TrainConfig(strategy="zero1", pp=2), 2, r"zero1 with tp 1 x pp 2 is refused"),
        (
            TrainConfig(strategy="fsdp", tp=2, fsdp=FSDPConfig(mode="hybrid_shard")),
            4,
            "fsdp hybrid_shard with tensor/pipeline parallelism is not implemented",
        ),
        (TrainConfig(strategy="ddp", tp=2, async_checkpoint=True), 2, "tp_pp writes its"),
        (TrainConfig(strategy="ddp", pp_schedule="gpipe"), 2, "apply with tp or pp above 1"),
    ],
    ids=["zero2-tp", "zero1-pp", "hybrid-tp", "async-tp", "schedule-without-pp"],
)
def test_strategies_that_do_not_combine_with_model_parallelism_say_why(config, world_size, message):
    with pytest.raises(ValueError, match=message):
        strategies.check_config(config, world(world_size))


def test_tensor_parallel_groups_stay_inside_a_node():
    with pytest.raises(ValueError, match="tp 4 must divide the 2 processes per node"):
        strategies.check_config(TrainConfig(strategy="ddp", tp=4), world(8, local=2))
    strategies.check_config(TrainConfig(strategy="ddp", tp=2, pp=2), world(8, local=2))


def test_ddp_and_fsdp_run_on_the_mesh_when_tp_or_pp_is_above_one():
    assert strategies.effective_name(TrainConfig(strategy="ddp", tp=2)) == "tp_pp"
    assert strategies.effective_name(TrainConfig(strategy="fsdp", pp=2)) == "tp_pp_fsdp"
    assert strategies.effective_name(TrainConfig(strategy="fsdp")) == "fsdp"


def test_strategy_options_apply_to_their_strategy_only():
    strategies.check_config(TrainConfig(strategy="zero3", offload_params=True), world(2))
    cases = [
        (TrainConfig(strategy="single"), 2, "use --strategy ddp"),
        (TrainConfig(strategy="ddp", offload_optimizer=True), 2, "apply to zero1, zero2"),
        (TrainConfig(strategy="ddp", deepspeed={}), 2, "--deepspeed-config applies"),
        (TrainConfig(strategy="zero2", offload_params=True), 2, "offload_params needs zero3"),
        (TrainConfig(strategy="zero1", async_checkpoint=True), 2, "async_checkpoint is impl"),
        (TrainConfig(strategy="ddp", fsdp=FSDPConfig("shard_grad_op")), 2, "fsdp only"),
        (TrainConfig(strategy="fsdp", fsdp=FSDPConfig("zero_shard")), 2, "unknown fsdp mode"),
        (TrainConfig(strategy="fsdp", fsdp=FSDPConfig("full_shard", 2)), 2, "hybrid_shard only"),
        (TrainConfig(strategy="fsdp", fsdp=FSDPConfig("hybrid_shard", 3)), 4, "must divide"),
    ]
    for config, size, message in cases:
        with pytest.raises(ValueError, match=message):
            strategies.check_config(config, world(size))
    with pytest.raises(ValueError, match="unknown strategy 'horovod'; valid strategies: ddp"):
        strategies.check_name("horovod")


def test_hybrid_shard_shards_within_a_node_and_replicates_across_nodes():
    assert hybrid_mesh_shape(dp=16, shard_size=0, local_world_size=8) == (2, 8)
    assert hybrid_mesh_shape(dp=16, shard_size=4, local_world_size=8) == (4, 4)


def ds(**values) -> dict:
    return {"zero_optimization": {"stage": 2}, **values}


def test_deepspeed_config_fills_in_the_trainers_values():
    config = TrainConfig(strategy="zero2", batch_size=16, micro_batch_size=4, deepspeed=ds())
    built = deepspeed_config.build(config, dp=2, stage=2)
    assert built["train_batch_size"] == 16
    assert built["train_micro_batch_size_per_gpu"] == 4
    assert built["gradient_accumulation_steps"] == 2
    assert built["gradient_clipping"] == 1.0
    assert built["bf16"] == {"enabled": False}
    assert built["zero_optimization"] == {"stage": 2}
    offloaded = deepspeed_config.build(
        replace(
            config, strategy="zero3", deepspeed={}, offload_optimizer=True, offload_params=True
        ),
        2,
        3,
    )
    assert offloaded["zero_optimization"]["offload_param"] == {"device": "cpu"}
    assert offloaded["zero_force_ds_cpu_optimizer"] is False


@pytest.mark.parametrize(
    "values, message",
    [
        (
            {
                "train_batch_size": 32,
                "train_micro_batch_size_per_gpu": 4,
                "gradient_accumulation_steps": 2,
            },
            r"train_batch_size 32 must equal train_micro_batch_size_per_gpu 4 x "
            r"gradient_accumulation_steps 2 x data-parallel size 2 = 16",
        ),
        (
            {"train_batch_size": 30, "train_micro_batch_size_per_gpu": 4},
            "not a multiple of train_micro_batch_size_per_gpu 4 x data-parallel size 2",
        ),
        ({"train_batch_size": "16"}, "must be a positive integer"),
        ({"optimizer": {"type": "Adam"}}, "remove the 'optimizer' section"),
        ({"fp16": {"enabled": True}}, "fp16 is not supported"),
        ({"zero_optimization": {"stage": 3}}, "stage is 3, but the strategy is zero2"),
    ],
)
def test_deepspeed_config_that_does_not_add_up_is_refused(values, message):
    config = TrainConfig(strategy="zero2", batch_size=16, deepspeed=ds(**values))
    with pytest.raises(ValueError, match=message):
        deepspeed_config.build(config, dp=2, stage=2)


def parse(argv: list[str], env: dict[str, str] | None = None) -> TrainConfig:
    return config_from_args(build_parser().parse_args(argv), env or {})


def test_the_deepspeed_file_sets_defaults_and_flags_must_agree(tmp_path):
    path = tmp_path / "ds.json"
    path.write_text(
        json.dumps(
            {
                "train_batch_size": 32,
                "train_micro_batch_size_per_gpu": 8,
                "gradient_accumulation_steps": 2,
                "gradient_clipping": 0.5,
                "bf16": {"enabled": True},
                "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}},
            }
        )
    )
    config = parse(["--strategy", "zero3", "--deepspeed-config", str(path)])
    assert (config.batch_size, config.micro_batch_size, config.grad_clip) == (32, 8, 0.5)
    assert config.precision == "bf16" and config.offload_optimizer
    validate(config, 2)
    strategies.check_config(config, world(2))

    flagged = parse(["--strategy", "zero3", "--deepspeed-config", str(path), "--batch-size", "64"])
    with pytest.raises(ValueError, match="train_batch_size is 32, but this run uses 64"):
        strategies.check_config(flagged, world(2))
    with pytest.raises(ValueError, match=r"DeepSpeed config .*missing\.json"):
        parse(["--strategy", "zero3", "--deepspeed-config", str(tmp_path / "missing.json")])


def test_the_fsdp_file_sets_the_mode_and_the_flag_wins(tmp_path):
    path = tmp_path / "fsdp.json"
    path.write_text(json.dumps({"mode": "hybrid_shard", "shard_size": 2}))
    config = parse(["--strategy", "fsdp", "--fsdp-config", str(path)])
    assert config.fsdp == FSDPConfig("hybrid_shard", 2)
    flagged = parse(["--strategy", "fsdp", "--fsdp-config", str(path), "--fsdp-mode", "full_shard"])
    assert flagged.fsdp.mode == "full_shard"
    with pytest.raises(ValueError, match="unknown key 'sharding_strategy'"):
        fsdp_from_json({"sharding_strategy": "FULL_SHARD"})
    with pytest.raises(ValueError, match="shard_size must be a int"):
        fsdp_from_json({"shard_size": "8"})


def test_the_control_planes_json_arrives_in_the_environment():
    """The composer shares no file system with the container: it sets these variables."""
    env = {
        "CP_DEEPSPEED_CONFIG_JSON": json.dumps(
            {"train_batch_size": 16, "zero_optimization": {"stage": 2}}
        ),
        "CP_FSDP_CONFIG_JSON": json.dumps({"mode": "shard_grad_op"}),
        "CP_PARALLELISM_JSON": json.dumps({"dp": 2, "tp": 1, "pp": 1}),
    }
    zero = parse(["--strategy", "zero2"], env)
    assert zero.deepspeed == {"train_batch_size": 16, "zero_optimization": {"stage": 2}}
    assert zero.batch_size == 16 and (zero.dp, zero.tp, zero.pp) == (2, 1, 1)
    assert parse(["--strategy", "fsdp"], env).fsdp.mode == "shard_grad_op"
    assert parse(["--set", "tp=2"], env).tp == 2  # --set still wins
    pipelined = {"dp": 1, "tp": 2, "pp": 2, "pp_schedule": "gpipe", "sequence_parallel": True}
    config = parse([], {"CP_PARALLELISM_JSON": json.dumps(pipelined)})
    assert (config.pp_schedule, config.sequence_parallel) == ("gpipe", True)
    with pytest.raises(ValueError, match="pp_virtual_stages must be a int, not '2'"):
        parse([], {"CP_PARALLELISM_JSON": json.dumps({"pp_virtual_stages": "2"})})
    with pytest.raises(ValueError, match=r"CP_FSDP_CONFIG_JSON: expected a JSON object"):
        parse([], {"CP_FSDP_CONFIG_JSON": "[]"})
    with pytest.raises(ValueError, match="parallelism: unknown keys ep"):
        parse([], {"CP_PARALLELISM_JSON": json.dumps({"ep": 2})})
