"""Tensor x pipeline x data parallelism trains exactly like one process, and its checkpoints
resume at other degrees.

Every layout runs the trainer's own CLI parsing, validation and `Trainer.run()` in one group of
processes per world size (strategy_group.py), on CPU with gloo, in fp32: 20 steps of the same
seed, data and global batch as the single-process reference (`single_run`, whose first 20
steps share their learning rates). gloo runs every collective these layouts need (all-reduce,
all-gather, reduce-scatter, and point-to-point sends between pipeline stages), so each
combination is compared here; none is left to the GPU machine.
"""

from __future__ import annotations

import json

import pytest
import torch

from tests.trainers.conftest import GROUP_ARGS, GROUP_STEPS, SIGTERM_AT, STOPPED_AT, Group
from tests.trainers.replicas import assert_losses_close, finish_all, start_world
from trainers.config import ModelConfig
from trainers.torch.model import GPT

pytestmark = pytest.mark.trainers

REL = 1e-4  # fp32, 20 steps

# World size 2: one kind of model parallelism at a time.
PAIRS = {
    "tp2": ["--strategy", "ddp", "--set", "tp=2"],
    "tp2-sequence_parallel": ["--strategy", "ddp", "--set", "tp=2", "--set", "sequence_parallel=1"],
    "pp2-gpipe": ["--strategy", "ddp", "--set", "pp=2", "--set", "pp_schedule=gpipe"],
    # Four micro-batches of two sequences, from the config.
    "pp2-1f1b": ["--strategy", "ddp", "--set", "pp=2", "--set", "micro_batch_size=2"],
}
# World size 4: model parallelism composed with data parallelism, or both kinds at once.
QUADS = {
    "tp2xdp2": ["--strategy", "ddp", "--set", "tp=2"],
    "pp2xdp2": ["--strategy", "ddp", "--set", "pp=2"],
    "tp2xpp2": ["--strategy", "ddp", "--set", "tp=2", "--set", "pp=2"],
    "tp2xfsdp2": ["--strategy", "fsdp", "--set", "tp=2"],
    "pp2xfsdp2": ["--strategy", "fsdp", "--set", "pp=2"],
}
# Interleaved 1F1B needs two stages per pipeline rank: four layers, compared with plain DDP
# of the same four-layer model (which the strategy tests hold equal to one process).
FOUR_LAYERS = ["--set", "model.n_layer=4"]
INTERLEAVED = {
    "ddp-4layers": ["--strategy", "ddp", *FOUR_LAYERS],
    "pp2-interleaved": [
        "--strategy",
        "ddp",
        "--set",
        "pp=2",
        "--set",
        "pp_virtual_stages=2",
        "--set",
        "pp_schedule=interleaved_1f1b",
        *FOUR_LAYERS,
    ],
}
# Stopped by SIGTERM as TP2 x DP2, resumed at other degrees.
RESUMED_AS = {
    "pp2xdp2": ["--strategy", "ddp", "--set", "pp=2"],
    "tp1xdp4": ["--strategy", "tp_pp"],
    "tp2xpp2": ["--strategy", "fsdp", "--set", "tp=2", "--set", "pp=2"],
}


def _run_group(base, name: str, world_size: int, runs: list[dict]) -> Group:
    spec = base / f"{name}.json"
    spec.write_text(json.dumps({"runs": runs}))
    replicas = start_world([str(spec)], world_size, module="tests.trainers.strategy_group")
    results = finish_all(replicas, timeout=600)
    for result in results:
        assert result.returncode == 0, result.stderr[-5000:]
    return Group(results[0], base)


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    base = tmp_path_factory.mktemp("mesh2")
    runs = [
        {"name": name, "args": [*GROUP_ARGS, *args, "--checkpoint-dir", str(base / name)]}
        for name, args in PAIRS.items()
    ]
    return _run_group(base, "pairs", 2, runs)


@pytest.fixture(scope="module")
def quads(tmp_path_factory):
    base = tmp_path_factory.mktemp("mesh4")
    runs = []
    for name, args in {**QUADS, **INTERLEAVED}.items():
        runs.append(
            {"name": name, "args": [*GROUP_ARGS, *args, "--checkpoint-dir", str(base / name)]}
        )
    resume = ["--checkpoint-dir", str(base / "resume")]
    runs.append(
        {
            "name": "tp2xdp2/stopped",
            "args": [*GROUP_ARGS, *QUADS["tp2xdp2"], *resume],
            "sigterm_at": SIGTERM_AT,
        }
    )
    for name, args in RESUMED_AS.items():
        # Each resumes the same stopped checkpoint: a copy of the folder per layout.
        folder = base / f"resume-{name}"
        runs.append({"name": f"copy/{name}", "copy": [str(base / "resume"), str(folder)]})
        runs.append(
            {
                "name": f"resumed/{name}",
                "args": [*GROUP_ARGS, *args, "--checkpoint-dir", str(folder)],
            }
        )
    runs.append(
        {
            "name": "tp2xpp2/export",
            "args": [
                *GROUP_ARGS,
                *QUADS["tp2xpp2"],
                "--checkpoint-every",
                "0",
                "--model-dir",
                str(base / "export"),
            ],
        }
    )
    group = _run_group(base, "quads", 4, runs)
    group.base = base
    return group


def _reference(single_run) -> dict[int, float]:
    return {s: v for s, v in single_run[0].losses().items() if s <= GROUP_STEPS}


@pytest.mark.parametrize("name", PAIRS)
def test_two_ranks_train_like_one_process(name, single_run, pairs):
    assert pairs.exit_code(name) == 0
    losses = pairs.losses(name)
    assert sorted(losses) == list(range(1, GROUP_STEPS + 1))
    assert_losses_close(losses, _reference(single_run), REL)
    single_evals = {e["step"]: e["metrics"]["val_loss"] for e in single_run[0].of("eval")}
    for event in pairs.of(name, "eval"):
        assert event["metrics"]["val_loss"] == pytest.approx(single_evals[event["step"]], rel=REL)


@pytest.mark.parametrize("name", QUADS)
def test_four_ranks_train_like_one_process(name, single_run, quads):
    losses = quads.losses(name)
    assert sorted(losses) == list(range(1, GROUP_STEPS + 1))
    assert_losses_close(losses, _reference(single_run), REL)


def test_interleaved_1f1b_trains_like_data_parallel(quads):
    assert_losses_close(quads.losses("pp2-interleaved"), quads.losses("ddp-4layers"), REL)


def test_run_started_reports_the_degrees(pairs, quads):
    (started,) = quads.of("tp2xpp2", "run_started")
    assert started["dims"] == {"dp": 1, "tp": 2, "pp": 2}
    assert "tp2 x pp2" in started["message"]
    (started,) = quads.of("tp2xfsdp2", "run_started")
    assert started["dims"] == {"dp": 2, "tp": 2, "pp": 1}
    (started,) = pairs.of("pp2-1f1b", "run_started")
    assert started["dims"] == {"dp": 1, "tp": 1, "pp": 2}


def test_every_rank_writes_its_shards(quads):
    folder = quads.base / "tp2xpp2" / f"step-{GROUP_STEPS:08d}"
    files = {p.name for p in (folder / "dcp").iterdir()}
    assert {".metadata", *(f"__{r}_0.distcp" for r in range(4))} <= files
    marker = json.loads((folder / "COMMITTED").read_text())
    assert marker["format"] == "dcp-mesh"
    assert marker["dims"] == {"dp": 1, "tp": 2, "pp": 2}


def test_sigterm_saves_then_resumes_at_other_degrees(quads):
    stopped = "tp2xdp2/stopped"
    assert quads.exit_code(stopped) == 143
    (preempted,) = quads.of(stopped, "preempted")
    assert preempted["step"] == STOPPED_AT
    assert preempted["checkpoint_path"] == str(quads.base / "resume" / f"step-{STOPPED_AT:08d}")
    uninterrupted = quads.losses("tp2xdp2")
    for name in RESUMED_AS:
        run = f"resumed/{name}"
        assert quads.exit_code(run) == 0
        assert quads.of(run, "resumed")[0]["step"] == STOPPED_AT
        losses = quads.losses(run)
        assert sorted(losses) == list(range(STOPPED_AT + 1, GROUP_STEPS + 1))
        assert_losses_close(losses, uninterrupted, REL)


def test_export_is_the_whole_model(quads, single_run):
    """Gathered from every tensor and pipeline shard into the plain GPT's layout."""
    weights = torch.load(quads.base / "export" / "model.pt", weights_only=True)
    model = GPT(ModelConfig(), seed=0)
    model.load_state_dict(weights)  # strict: every parameter, nothing else
    assert torch.equal(weights["wte.weight"], weights["lm_head.weight"])  # tied copies equal
    exported = json.loads((quads.base / "export" / "config.json").read_text())
    assert exported["step"] == GROUP_STEPS


def test_a_tensor_x_pipeline_checkpoint_serves_as_the_whole_model(quads):
    """The server consolidates the TP x PP shards of a step into the plain GPT: the weights the
    same run exports whole at that step."""
    from trainers.serving import loader

    served = loader.load(str(quads.base / "tp2xpp2" / f"step-{GROUP_STEPS:08d}"))
    exported = loader.load(str(quads.base / "export"))
    assert served.step == GROUP_STEPS
    got, expected = served.model.state_dict(), exported.model.state_dict()
    assert got.keys() == expected.keys()
    for key, tensor in expected.items():
        torch.testing.assert_close(got[key], tensor, rtol=1e-5, atol=1e-6, msg=key)
