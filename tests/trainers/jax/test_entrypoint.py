"""The entrypoint's contract around the training itself: configuration errors, presets shared
with the PyTorch trainer, the same model, and no torch in a JAX process."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import require
from tests.trainers.jax.conftest import jax_env, start_jax
from tests.trainers.replicas import ROOT

pytestmark = pytest.mark.trainers


def test_a_mesh_that_does_not_match_the_devices_exits_2_with_an_error_event(compile_cache):
    result = start_jax(["--mesh", "2,2,1"], 8, compile_cache).finish(120)
    assert result.returncode == 2, result.stderr[-2000:]
    error = result.one("error")
    assert "4 devices" in error["message"] and "8" in error["message"]


def test_a_mesh_that_cannot_split_the_model_exits_2(compile_cache):
    # The tiny preset has 2 heads: a tensor degree of 4 cannot split them.
    result = start_jax(["--mesh", "2,1,4"], 8, compile_cache).finish(120)
    assert result.returncode == 2
    assert "n_head 2 must be a multiple of tensor 4" in result.one("error")["message"]


def test_the_jax_trainer_never_loads_torch(compile_cache):
    code = ("import sys, trainers.jax.train, trainers.jax.trainer; "
            "sys.exit('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=jax_env(1, compile_cache),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_presets_and_model_match_the_pytorch_trainer():
    require(importlib.util.find_spec("torch") is not None, "the trainers extra (torch) is "
            "not installed; `make venv` installs it")
    import jax
    import jax.numpy as jnp

    from trainers.jax.config import preset
    from trainers.jax.mesh import build_mesh, resolve_mesh
    from trainers.jax.program import build_program
    from trainers.torch.config import preset as torch_preset

    for name in ("tiny", "small"):
        config, reference = preset(name), torch_preset(name)
        assert (config.model, config.steps, config.batch_size, config.lr) == (
            reference.model, reference.steps, reference.batch_size, reference.lr)
    config = preset("tiny")
    device = jax.devices()[:1]
    program = build_program(config, build_mesh(resolve_mesh(1, 1, 1, 1), device), jnp.float32)
    from trainers.torch.model import GPT

    gpt = GPT(config.model, seed=0)
    assert program.parameter_count() == gpt.num_parameters()


def test_per_host_times_take_the_pytorch_trainers_setting_and_slow_host_flag():
    """rank_times_every is the PyTorch trainer's field with its default; --debug-slow-rank and
    --debug-slow-seconds make a straggler host; a negative setting is refused by name."""
    from trainers.jax.config import validate
    from trainers.jax.train import build_parser, config_from_args
    from trainers.torch.config import TrainConfig

    args = build_parser().parse_args(["--debug-slow-rank", "1", "--debug-slow-seconds", "0.5"])
    config = config_from_args(args, {})
    assert (config.debug_slow_rank, config.debug_slow_seconds) == (1, 0.5)
    assert config.rank_times_every == TrainConfig().rank_times_every == 10
    args = build_parser().parse_args(["--set", "rank_times_every=-1"])
    with pytest.raises(ValueError, match="rank_times_every must be >= 0"):
        validate(config_from_args(args, {}), 1)
