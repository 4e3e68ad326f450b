"""Presets, `--set` overrides, validation and strategy names."""

from __future__ import annotations

import pytest

from trainers.config import PRESETS, apply_overrides
from trainers.torch.config import TrainConfig, preset
from trainers.torch.validation import validate

pytestmark = pytest.mark.trainers


def test_presets_are_valid_at_usual_world_sizes():
    for name in PRESETS:
        for world in (1, 2):
            validate(preset(name), world)


def test_overrides_convert_to_the_field_type():
    config = apply_overrides(
        preset("tiny"),
        [
            "warmup_steps=5",
            "lr=0.01",
            "model.n_layer=3",
            "model.bias=false",
            "data=/tmp/x.txt",
            "checkpoint_dir=none",
        ],
    )
    assert (config.warmup_steps, config.lr, config.model.n_layer) == (5, 0.01, 3)
    assert config.model.bias is False
    assert config.data == "/tmp/x.txt"
    assert config.checkpoint_dir is None


@pytest.mark.parametrize(
    "assignment, message",
    [
        ("nonsense=1", "unknown setting"),
        ("steps=ten", "not a valid int"),
        ("model.bias=maybe", "not a valid bool"),
        ("lr", "KEY=VALUE"),
        ("steps.x=1", "no sub-fields"),
        ("model=1", "cannot be set"),
    ],
)
def test_bad_overrides_say_what_is_wrong(assignment, message):
    with pytest.raises(ValueError, match=message):
        apply_overrides(preset("tiny"), [assignment])


def test_global_batch_must_split_evenly_across_ranks():
    with pytest.raises(ValueError, match="multiple of the data-parallel size 2"):
        validate(TrainConfig(batch_size=7), 2)
    with pytest.raises(ValueError, match="micro_batch_size 3 must divide"):
        validate(TrainConfig(batch_size=8, micro_batch_size=3), 2)


def test_config_round_trips_through_a_dict():
    config = preset("small")
    assert TrainConfig.from_dict(config.to_dict()) == config


def test_global_batch_splits_across_the_data_parallel_ranks_only():
    validate(TrainConfig(batch_size=8, dp=0), 2)
    with pytest.raises(ValueError, match="multiple of the data-parallel size 4"):
        validate(TrainConfig(batch_size=6), 4)
