"""The throughput bench's MFU column: model FLOPs per token over a catalogued peak, never a
peak made up for a CPU."""

from __future__ import annotations

import pytest

from bench import mfu
from vertexplan.perf.peaks import Peak


def test_model_flops_are_six_per_parameter_plus_attention() -> None:
    # 4 layers x 4 heads of 32 dimensions over 128 positions: 12 * 4 * 4 * 32 * 128 attention.
    assert mfu.model_flops_per_token(842_496, 4, 4, 128, 128) == \
        6 * 842_496 + 12 * 4 * 4 * 32 * 128


def test_a_cpu_row_has_no_peak_and_says_so() -> None:
    peak = mfu.device_peak(None, "fp32")
    assert peak == "n/a (no GPU peak)"
    assert mfu.mfu_text(10_000.0, 5_000_000, 4, peak) == "n/a (no GPU peak)"


@pytest.mark.parametrize(("name", "accelerator"), [
    ("NVIDIA H100 80GB HBM3", "NVIDIA_H100_80GB"),
    ("NVIDIA H200", "NVIDIA_H200_141GB"),
    ("NVIDIA A100-SXM4-80GB", "NVIDIA_A100_80GB"),
    ("NVIDIA A100-SXM4-40GB", "NVIDIA_TESLA_A100"),
    ("NVIDIA L4", "NVIDIA_L4"),
    ("Tesla T4", "NVIDIA_TESLA_T4"),
    ("NVIDIA GeForce RTX 4090", None),
])
def test_a_gpu_is_found_in_the_catalogue_by_its_cuda_name(name: str,
                                                        accelerator: str | None) -> None:
    assert mfu.accelerator_of(name) == accelerator


def test_a_gpu_rows_mfu_is_achieved_model_flops_over_the_devices_peak() -> None:
    peak = mfu.device_peak("NVIDIA H100 80GB HBM3", "bf16")
    assert isinstance(peak, Peak) and peak.precision == "bf16"
    tokens_per_s = 0.4 * 8 * peak.flops / 1e9  # 40% of 8 GPUs' peak at 1 GFLOP per token
    assert mfu.mfu_text(tokens_per_s, 10**9, 8, peak) == "40.0%"
    assert mfu.device_peak("NVIDIA GeForce RTX 4090", "fp32") == \
        "n/a (no peak known for NVIDIA GeForce RTX 4090)"
    assert mfu.device_peak("Tesla T4", "bf16").startswith("n/a (")  # no bf16 on a T4
