"""Which Vertex AI training quota an accelerator draws on (VERTEX_FACTS.md, A3).

Accelerators count against `aiplatform.googleapis.com/custom_model_training_{s}` per region;
SPOT and FLEX_START against `..._preemptible_{s}`: two separate quotas, so a job that does not
fit on-demand may fit on spot, and the other way round. The emulator must enforce the very
metrics the control plane reads and plans with: this is the one table for both.
"""

from __future__ import annotations

SERVICE = "aiplatform.googleapis.com"
# AcceleratorType -> the metric's suffix s. Confirmed (A3): T4, V100, P100, L4, A100, A100 80GB,
# H100, H100 Mega, H200, TPU v3, v5e, v6e. P4's and B200's suffixes follow the same pattern but
# are UNCONFIRMED (A3), as are the quota_id strings of every metric.
# v5p has no entry: its name is unknown too, and a job on an accelerator without one is shown
# without a quota line rather than with a guessed one.
ACCELERATOR_METRICS = {
    "NVIDIA_TESLA_T4": "nvidia_t4_gpus",
    "NVIDIA_TESLA_V100": "nvidia_v100_gpus",
    "NVIDIA_TESLA_P100": "nvidia_p100_gpus",
    "NVIDIA_TESLA_P4": "nvidia_p4_gpus",
    "NVIDIA_L4": "nvidia_l4_gpus",
    "NVIDIA_TESLA_A100": "nvidia_a100_gpus",
    "NVIDIA_A100_80GB": "nvidia_a100_80gb_gpus",
    "NVIDIA_H100_80GB": "nvidia_h100_gpus",
    "NVIDIA_H100_MEGA_80GB": "nvidia_h100_mega_gpus",
    "NVIDIA_H200_141GB": "nvidia_h200_gpus",
    "NVIDIA_B200": "nvidia_b200_gpus",
    "TPU_V3": "tpu_v3",
    "TPU_V5_LITEPOD": "tpu_v5e",
    "TPU_V6E": "tpu_v6e",
}
# The entries above whose metric name is inferred, not confirmed.
UNCONFIRMED = frozenset({"NVIDIA_TESLA_P4", "NVIDIA_B200"})
SCHEDULINGS = ("STANDARD", "SPOT", "FLEX_START")
# The schedulings that draw on the preemptible quotas.
PREEMPTIBLE = frozenset({"SPOT", "FLEX_START"})


def metric(accelerator: str, *, preemptible: bool) -> str | None:
    """The quota an accelerator draws on, on-demand or preemptible; None when not known."""
    suffix = ACCELERATOR_METRICS.get(accelerator)
    if suffix is None:
        return None
    return f"{SERVICE}/custom_model_training_{'preemptible_' if preemptible else ''}{suffix}"


def metric_for(accelerator: str, scheduling: str) -> str | None:
    """The quota an accelerator draws on under a scheduling strategy (STANDARD, SPOT,
    FLEX_START; anything else is on-demand)."""
    return metric(accelerator, preemptible=scheduling in PREEMPTIBLE)


def all_metrics() -> list[str]:
    """Every metric of the table, on-demand and preemptible."""
    return [f"{SERVICE}/custom_model_training_{kind}{suffix}"
            for suffix in ACCELERATOR_METRICS.values() for kind in ("", "preemptible_")]
