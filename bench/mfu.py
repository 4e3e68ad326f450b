"""Model FLOPs utilisation of a benchmark row: tokens/s x model FLOPs per token over the peak.

Model FLOPs per token are the control plane's (``vertexplan.perf.flops``: 6 x parameters plus
the attention scores and their weighted sum), and a device's peak is the catalogue's dense
figure for the precision the row ran in (``vertexplan.perf.peaks``). A CPU has no peak in the
catalogue, and none is invented for it: its rows say "n/a (no GPU peak)".
"""

from __future__ import annotations

from vertexplan.perf.flops import ModelShape, flops_per_token
from vertexplan.perf.peaks import Peak, peak_flops

NO_CPU_PEAK = "n/a (no GPU peak)"
# Words of torch.cuda.get_device_name() and the catalogue's name for that GPU, the most
# specific first ("NVIDIA A100-SXM4-80GB" is an A100 80GB, "NVIDIA A100-SXM4-40GB" the other).
GPU_NAMES = (
    (("GB200",), "NVIDIA_GB200"),
    (("B200",), "NVIDIA_B200"),
    (("H200",), "NVIDIA_H200_141GB"),
    (("H100",), "NVIDIA_H100_80GB"),
    (("A100", "80GB"), "NVIDIA_A100_80GB"),
    (("A100",), "NVIDIA_TESLA_A100"),
    (("RTX PRO 6000",), "NVIDIA_RTX_PRO_6000"),
    (("L4",), "NVIDIA_L4"),
    (("T4",), "NVIDIA_TESLA_T4"),
    (("V100",), "NVIDIA_TESLA_V100"),
    (("P100",), "NVIDIA_TESLA_P100"),
    (("P4",), "NVIDIA_TESLA_P4"),
)


def model_flops_per_token(params: int, n_layer: int, n_head: int, n_embd: int,
                          block_size: int) -> int:
    """One training token's forward and backward FLOPs for the GPT of these sizes."""
    return flops_per_token(ModelShape(params, n_layer, n_head, n_embd, block_size))


def accelerator_of(device_name: str) -> str | None:
    """The catalogue's accelerator for a CUDA device name; None for one it does not list."""
    for words, accelerator in GPU_NAMES:
        if all(word in device_name for word in words):
            return accelerator
    return None


def device_peak(device_name: str | None, precision: str) -> Peak | str:
    """One device's peak for a row run in ``precision`` on ``device_name`` (None: the CPU), or
    the words the MFU column shows instead."""
    if device_name is None:
        return NO_CPU_PEAK
    accelerator = accelerator_of(device_name)
    if accelerator is None:
        return f"n/a (no peak known for {device_name})"
    peak = peak_flops(accelerator, precision)
    return peak if isinstance(peak, Peak) else f"n/a ({peak})"


def mfu_text(tokens_per_s: float, flops_per_token_: int, devices: int,
             peak: Peak | str) -> str:
    """The MFU column: achieved model FLOP/s over the devices' peak, or why there is none."""
    if isinstance(peak, str):
        return peak
    return f"{tokens_per_s * flops_per_token_ / (peak.flops * devices):.1%}"
