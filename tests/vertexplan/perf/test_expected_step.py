"""The modelled step time: a step's FLOPs over the devices' peak at the assumed utilisation,
with the multi-node scaling and the pipeline bubble, computed here by hand."""

from __future__ import annotations

from fractions import Fraction

import pytest

from tests.vertexplan.composer.helpers import compose_request
from vertexplan.memory import Layout, ModelShape
from vertexplan.perf.expected_step import ASSUMED_UTILISATION, ExpectedStep, expected_step

A100_BF16 = 312e12
MODEL = ModelShape(parameters=1_000_000_000, dtype="bf16", layers=24, hidden_size=2048,
                   sequence_length=2048)
ONE_NODE = Layout(strategy="ddp", devices_per_node=8, nodes=1)


def _step(model: ModelShape = MODEL, layout: Layout = ONE_NODE, batch: int = 64,
          machine: str = "a2-highgpu-8g", accelerator: str = "NVIDIA_TESLA_A100") -> ExpectedStep:
    found = expected_step(model, layout, global_batch=batch, accelerator=accelerator,
                          machine_type=machine)
    assert isinstance(found, ExpectedStep), found
    return found


def test_one_node_is_the_steps_flops_over_the_devices_peak_at_the_assumed_utilisation() -> None:
    step = _step()
    tokens = 64 * 2048
    per_token = 6 * 10**9 + 12 * 24 * 2048 * 2048
    assert step.tokens_per_step == tokens and step.flops_per_step == tokens * per_token
    want = Fraction(tokens * per_token) / (Fraction(A100_BF16) * 8 * ASSUMED_UTILISATION)
    assert step.seconds == want
    assert round(float(step.seconds), 3) == 0.946
    assert step.explain().startswith("modelled, not measured: ")
    assert "8 x NVIDIA_TESLA_A100 at 312 TFLOP/s bf16" in step.explain()


def test_a_frozen_base_takes_no_weight_gradients_and_recomputation_runs_the_forward_again(
) -> None:
    tokens = 64 * 2048
    attention = 12 * 24 * 2048 * 2048
    adapters = ModelShape(**{**MODEL.__dict__, "trainable_parameters": 10**7})
    assert _step(adapters).flops_per_step == tokens * (4 * 10**9 + 2 * 10**7 + attention)
    checkpointed = ModelShape(**{**MODEL.__dict__, "activation_checkpointing": "full"})
    assert _step(checkpointed).flops_per_step == tokens * (
        8 * 10**9 + attention + attention // 3)
    assert "every block's forward recomputed" in _step(checkpointed).explain()
    # Selective recomputes the attention core only: its scores and their product with V.
    selective = ModelShape(**{**MODEL.__dict__, "activation_checkpointing": "selective"})
    assert _step(selective).flops_per_step == tokens * (6 * 10**9 + attention + attention // 3)
    assert "the attention recomputed" in _step(selective).explain()
    assert _step().seconds < _step(selective).seconds < _step(checkpointed).seconds


def test_more_nodes_lose_throughput_by_their_network_and_a_pipeline_by_its_bubble() -> None:
    four = Layout(strategy="ddp", devices_per_node=8, nodes=4)
    a2 = _step(layout=four, batch=256)
    # Four times the work on four times the devices: one node's time over the scaling.
    assert a2.seconds == _step().seconds / a2.scaling
    assert a2.scaling == 1 / (1 + 3 * Fraction(12, 100))
    mega = _step(layout=four, batch=256, machine="a3-megagpu-8g",
                 accelerator="NVIDIA_H100_MEGA_80GB")
    assert mega.scaling > a2.scaling
    piped = Layout(strategy="ddp", devices_per_node=8, nodes=1, pipeline_parallel=4,
                   microbatches=4)
    bubble = Fraction(3, 7)  # (pp - 1) / (m + pp - 1)
    assert _step(layout=piped).seconds == pytest.approx(
        float(_step().seconds / (1 - bubble)), rel=1e-9)
    assert "pipeline bubble" in _step(layout=piped).explain()


@pytest.mark.parametrize(("model", "accelerator", "why"), [
    (ModelShape(parameters=10**9, dtype="bf16"), "NVIDIA_TESLA_A100", "sequence_length"),
    (MODEL, "NVIDIA_TESLA_T4", "no bf16 peak"),
    (MODEL, None, "CPU job"),
])
def test_without_what_it_needs_it_says_why(model: ModelShape, accelerator: str | None,
                                           why: str) -> None:
    found = expected_step(model, ONE_NODE, global_batch=8, accelerator=accelerator,
                          machine_type="a2-highgpu-8g")
    assert isinstance(found, str) and why in found


def test_a_composed_job_with_a_model_carries_its_modelled_step() -> None:
    composed = compose_request({
        "name": "lm", "strategy": "ddp", "precision": "bf16",
        "chief": {"machine_type": "a2-highgpu-8g", "accelerator_type": "NVIDIA_TESLA_A100",
                  "accelerator_count": 8},
        "batch": {"global_batch_size": 64},
        "model": {"parameters": 10**9, "layers": 24, "hidden_size": 2048,
                  "sequence_length": 2048}}, memory_policy="warn")
    assert composed.ok, composed.errors  # too big for 40 GB: a warning, still modelled
    assert isinstance(composed.expected_step, ExpectedStep)
    assert composed.expected_step.seconds == _step().seconds
    without = compose_request({"name": "lm", "chief": {"machine_type": "n1-standard-4"}})
    assert without.expected_step is None
