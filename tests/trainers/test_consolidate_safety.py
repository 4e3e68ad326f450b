"""A DeepSpeed checkpoint is a team's output, not code: the server's consolidation unpickles
its partitions weights-only, so a partition that would run a command is refused with the
reason, and the command never runs."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch

from trainers.serving import loader

pytestmark = pytest.mark.trainers

MODEL = {"block_size": 64, "n_layer": 2, "n_head": 2, "n_embd": 64, "vocab_size": 256,
         "dropout": 0.0, "bias": True}


class _RunsACommand:
    """What a hostile checkpoint pickles: unpickling it calls os.system."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return (os.system, (self.command,))


def _hostile_checkpoint(folder: Path, marker: Path) -> None:
    payload = {"module": {}, "buffer_names": [], "param_shapes": [],
               "shared_params": {}, "run": _RunsACommand(f"touch {marker}")}
    (folder / "deepspeed").mkdir(parents=True)
    for name in ("mp_rank_00_model_states.pt", "zero_pp_rank_0_mp_rank_00_optim_states.pt"):
        torch.save(payload, folder / "deepspeed" / name)
    (folder / "latest").write_text("deepspeed")
    (folder / "config.json").write_text(json.dumps({"model": MODEL}))
    (folder / "COMMITTED").write_text(json.dumps({"step": 5, "format": "deepspeed"}))


def test_a_partition_that_would_run_a_command_is_refused(tmp_path: Path) -> None:
    marker = tmp_path / "it-ran"
    folder = tmp_path / "step-00000005"
    _hostile_checkpoint(folder, marker)
    with pytest.raises(loader.ModelLoadError, match="refused to read the DeepSpeed partitions"):
        loader.load(str(folder))
    assert not marker.exists()


def test_the_patch_is_undone_after_the_refusal(tmp_path: Path) -> None:
    from deepspeed.utils import zero_to_fp32

    _hostile_checkpoint(tmp_path / "step", tmp_path / "it-ran")
    with pytest.raises(loader.ModelLoadError):
        loader.load(str(tmp_path / "step"))
    assert zero_to_fp32.torch is torch
