"""A sharded checkpoint is servable: the server consolidates FSDP's DCP shards and DeepSpeed
ZeRO's partitions into the whole model, and it answers as the same step's single-file (ddp)
checkpoint does. The strategy group trains every strategy on the same batches from the same
seed, so their step-20 weights agree to rounding."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from contract import prediction
from tests.trainers.conftest import GROUP_STEPS, SHARDED
from trainers.serving import generate, loader

pytestmark = pytest.mark.trainers

PROMPTS = ["def main():\n    ", "import os\n", "The "]


def _step_folder(strategy_group, name: str) -> str:
    return str(strategy_group.local_root(name) / "full" / f"step-{GROUP_STEPS:08d}")


@pytest.mark.parametrize("name", SHARDED)
def test_a_sharded_checkpoint_serves_the_weights_and_answers_of_the_single_file_one(
        name, strategy_group):
    reference = loader.load(_step_folder(strategy_group, "ddp"))
    served = loader.load(_step_folder(strategy_group, name))
    assert served.step == GROUP_STEPS and served.params == reference.params
    expected = reference.model.state_dict()
    got = served.model.state_dict()
    assert got.keys() == expected.keys()
    for key, tensor in expected.items():
        torch.testing.assert_close(got[key], tensor, rtol=1e-3, atol=1e-5, msg=key)
    # Tied embeddings stay tied after consolidation.
    assert served.model.lm_head.weight.data_ptr() == served.model.wte.weight.data_ptr()
    instances = prediction.parse_instances(PROMPTS, {"max_tokens": 12})
    assert generate.generate(served.model, instances) == generate.generate(
        reference.model, instances)


def test_shards_of_another_model_are_refused_with_the_reason(strategy_group, tmp_path):
    """A config that does not match the shards (one layer more) is a load error naming the
    folder, never a model with some weights left at their initial values."""
    folder = strategy_group.local_root("fsdp-full_shard") / "full" / f"step-{GROUP_STEPS:08d}"
    copy = tmp_path / folder.name
    shutil.copytree(folder, copy)
    config = json.loads((copy / "config.json").read_text())
    config["model"]["n_layer"] += 1
    (copy / "config.json").write_text(json.dumps(config))
    with pytest.raises(loader.ModelLoadError, match="does not hold this model's weights"):
        loader.load(str(copy))
