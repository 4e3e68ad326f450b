"""Peak dense matrix throughput per device: how the recommender compares devices' speed.

The catalogue has memory per device but no speed, and a recommendation across GPU and TPU
types needs some measure of it. Peak dense 16-bit tensor throughput (bf16, or fp16 where the
device has no bf16) is the one figure every vendor publishes the same way; real training reaches
a device-dependent fraction of it (memory bandwidth, interconnect, kernels), so durations scaled
by it are a first approximation, not a forecast. Keys are what ``describe_machine_spec`` calls a
device: the AcceleratorType name, or "TPU v6e" where Vertex has no enum value.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

SPEC_SHEETS = "vendor spec sheets (well-known figures, not re-read)"


@dataclass(frozen=True)
class PeakThroughput:
    device: str
    tflops: Fraction  # per device: per GPU, per TPU chip, per TensorCore for TPU v2/v3
    precision: str  # the precision the figure is quoted in
    source: str
    retrieved: str
    note: str = ""


def _row(device: str, tflops: str, precision: str = "bf16", note: str = "") -> PeakThroughput:
    return PeakThroughput(device, Fraction(tflops), precision, SPEC_SHEETS, "not re-read", note)


PEAK_THROUGHPUT: dict[str, PeakThroughput] = {row.device: row for row in (
    _row("NVIDIA_TESLA_P4", "5.5", "fp32", "no fast 16-bit arithmetic: its fp32 figure"),
    _row("NVIDIA_TESLA_P100", "18.7", "fp16", "PCIe card"),
    _row("NVIDIA_TESLA_V100", "125", "fp16", "SXM2 tensor cores"),
    _row("NVIDIA_TESLA_T4", "65", "fp16"),
    _row("NVIDIA_TESLA_A100", "312"),
    _row("NVIDIA_A100_80GB", "312"),
    _row("NVIDIA_L4", "121", note="dense (242 with 2:4 sparsity)"),
    _row("NVIDIA_H100_80GB", "989", note="SXM, dense"),
    _row("NVIDIA_H100_MEGA_80GB", "989", note="SXM, dense"),
    _row("NVIDIA_H200_141GB", "989", note="SXM, dense; same cores as H100, more memory"),
    _row("NVIDIA_B200", "2250", note="UNCONFIRMED: HGX B200 dense figure"),
    _row("TPU_V2", "22.5", note="per TensorCore (45 per chip)"),
    _row("TPU_V3", "61.5", note="per TensorCore (123 per chip)"),
    _row("TPU_V5_LITEPOD", "197", note="per v5e chip"),
    _row("TPU v6e", "918", note="per v6e (Trillium) chip"),
)}
DEVICES = tuple(PEAK_THROUGHPUT)


def peak_tflops(device: str | None) -> Fraction | None:
    """TFLOPS of one device, or None for a device without a figure (CPUs, K80)."""
    row = PEAK_THROUGHPUT.get(device or "")
    return row.tflops if row else None


# Which training precisions each device runs natively. bf16 came with Ampere (A100, L4) and
# TPUs; T4, V100 and P100 have fp16 tensor or vector units but no bf16; P4 has neither fast
# 16-bit path; TPUs have no fp16. (Vendor spec sheets, as above.)
_NO_BF16 = ("NVIDIA_TESLA_P4", "NVIDIA_TESLA_P100", "NVIDIA_TESLA_V100", "NVIDIA_TESLA_T4",
            "NVIDIA_TESLA_K80")
_NO_FP16 = ("NVIDIA_TESLA_P4", "NVIDIA_TESLA_K80", "TPU_V2", "TPU_V3", "TPU_V5_LITEPOD",
            "TPU v5p", "TPU v6e")


def supports_precision(device: str | None, precision: str | None) -> bool:
    """False when ``device`` cannot train in ``precision`` (bf16 on a T4, fp16 on a TPU)."""
    if not device or precision in (None, "", "fp32"):
        return True
    if precision == "bf16":
        return device not in _NO_BF16
    if precision == "fp16":
        return device not in _NO_FP16
    return True
