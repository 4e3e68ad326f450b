"""The DeepSpeed JSON for zero1/zero2/zero3: read the composer's file, check it, fill it in.

Pure functions (no deepspeed import), so a bad file is refused before any process group exists.
The trainer's config stays the one source of truth: the JSON's batch, clipping, precision and
offload settings become the trainer's defaults (`defaults_from`, applied under the command-line
flags), and `build` then writes the trainer's effective values back into the JSON, refusing any
value the JSON states differently. Everything else in the JSON (bucket sizes, overlap_comm,
stage-3 prefetch, ...) passes through to DeepSpeed untouched.

DeepSpeed's batch rule: train_batch_size = train_micro_batch_size_per_gpu x
gradient_accumulation_steps x data-parallel size.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from trainers.torch.config import TrainConfig

# The trainer builds AdamW and recomputes the learning rate from the step at every step, so a
# resumed run needs no scheduler state: a DeepSpeed optimizer or scheduler would fight it.
REFUSED_SECTIONS = {
    "optimizer": "the trainer builds AdamW itself (weight decay on matrices only)",
    "scheduler": "the trainer sets the learning rate from the step (warmup, cosine)",
}
OFFLOAD_KEYS = {"offload_optimizer": "offload_optimizer", "offload_param": "offload_params"}
BATCH_KEYS = ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps")


def defaults_from(ds: dict[str, Any]) -> dict[str, Any]:
    """TrainConfig fields that the DeepSpeed JSON sets, for those the command line leaves."""
    values: dict[str, Any] = {}
    for key in BATCH_KEYS:
        value = ds.get(key)
        if value is not None and (type(value) is not int or value < 1):
            raise ValueError(f"DeepSpeed config: {key} must be a positive integer, not {value!r}")
    if "train_batch_size" in ds:
        values["batch_size"] = ds["train_batch_size"]
    if "train_micro_batch_size_per_gpu" in ds:
        values["micro_batch_size"] = ds["train_micro_batch_size_per_gpu"]
    if "gradient_clipping" in ds:
        clip = ds["gradient_clipping"]
        if type(clip) not in (int, float) or clip < 0:
            raise ValueError(f"DeepSpeed config: gradient_clipping must be >= 0, not {clip!r}")
        values["grad_clip"] = float(clip)
    if _enabled(ds.get("bf16")):
        values["precision"] = "bf16"
    zero = ds.get("zero_optimization") or {}
    for section, field_name in OFFLOAD_KEYS.items():
        if _offloaded(zero.get(section)):
            values[field_name] = True
    return values


def build(config: TrainConfig, dp: int, stage: int) -> dict[str, Any]:
    """The DeepSpeed config for this run, or a ValueError naming the first disagreement."""
    ds = dict(config.deepspeed or {})
    _refuse_unsupported(ds)
    ds.update(_batch_settings(ds, config, dp))
    ds["gradient_clipping"] = _gradient_clipping(ds, config)
    ds["bf16"] = _bf16_section(ds, config)
    ds["zero_optimization"] = _zero_section(ds, config, stage)
    if config.offload_optimizer:
        # Offloading otherwise insists on DeepSpeedCPUAdam, a C++ op compiled at start-up; the
        # trainer's torch AdamW steps the CPU copy of the states just as well.
        ds.setdefault("zero_force_ds_cpu_optimizer", False)
    # DeepSpeed's own progress lines would interleave with the JSON events on stdout.
    ds.setdefault("steps_per_print", 2**31 - 1)
    ds.setdefault("wall_clock_breakdown", False)
    return ds


def _refuse_unsupported(ds: dict[str, Any]) -> None:
    for section, why in REFUSED_SECTIONS.items():
        if section in ds:
            raise ValueError(f"DeepSpeed config: remove the {section!r} section: {why}")
    if _enabled(ds.get("fp16")):
        raise ValueError("DeepSpeed config: fp16 is not supported by this trainer; use bf16")


def _batch_settings(ds: dict[str, Any], config: TrainConfig, dp: int) -> dict[str, int]:
    """The run's three batch numbers (BATCH_KEYS), after checking that the file agrees."""
    per_rank = config.batch_size // dp
    micro = config.micro_batch_size or per_rank
    effective = {
        "train_batch_size": config.batch_size,
        "train_micro_batch_size_per_gpu": micro,
        "gradient_accumulation_steps": per_rank // micro,
    }
    defaults_from(ds)  # the same type checks, for a config that did not come through the CLI
    _check_batch(ds, dp)
    for key, value in effective.items():
        if key in ds and ds[key] != value:
            raise ValueError(
                f"DeepSpeed config: {key} is {ds[key]}, but this run uses {value} (global batch "
                f"{config.batch_size} = micro batch {micro} x gradient accumulation "
                f"{per_rank // micro} x data-parallel size {dp}): make the file and the "
                "command line agree"
            )
    return effective


def _gradient_clipping(ds: dict[str, Any], config: TrainConfig) -> float:
    if "gradient_clipping" in ds and float(ds["gradient_clipping"]) != config.grad_clip:
        raise ValueError(
            f"DeepSpeed config: gradient_clipping {ds['gradient_clipping']} differs from the "
            f"trainer's grad_clip {config.grad_clip}"
        )
    return config.grad_clip


def _bf16_section(ds: dict[str, Any], config: TrainConfig) -> dict[str, Any]:
    bf16 = config.precision == "bf16"
    if "bf16" in ds and _enabled(ds["bf16"]) != bf16:
        raise ValueError(
            f"DeepSpeed config: bf16.enabled is {_enabled(ds['bf16'])}, but precision is "
            f"{config.precision}"
        )
    return {**(ds.get("bf16") or {}), "enabled": bf16}


def _zero_section(ds: dict[str, Any], config: TrainConfig, stage: int) -> dict[str, Any]:
    """zero_optimization with the strategy's stage and the trainer's offload settings."""
    zero = dict(ds.get("zero_optimization") or {})
    if zero.get("stage", stage) != stage:
        raise ValueError(
            f"DeepSpeed config: zero_optimization.stage is {zero['stage']}, but the strategy "
            f"is zero{stage}"
        )
    zero["stage"] = stage
    for section, field_name in OFFLOAD_KEYS.items():
        wanted = getattr(config, field_name)
        if _offloaded(zero.get(section)) != wanted:
            if not wanted:
                raise ValueError(
                    f"DeepSpeed config: zero_optimization.{section} offloads, but "
                    f"{field_name} is false"
                )
            zero[section] = {"device": "cpu"}
    if config.offload_params and stage != 3:
        raise ValueError(f"offload_params needs zero3 (ZeRO stage 3), not zero{stage}")
    return zero


def _check_batch(ds: dict[str, Any], dp: int) -> None:
    """The file's own batch numbers must satisfy DeepSpeed's rule at this data-parallel size."""
    total, micro, accumulation = (ds.get(key) for key in BATCH_KEYS)
    if None not in (total, micro, accumulation) and total != micro * accumulation * dp:
        raise ValueError(
            f"DeepSpeed config: train_batch_size {total} must equal "
            f"train_micro_batch_size_per_gpu {micro} x gradient_accumulation_steps "
            f"{accumulation} x data-parallel size {dp} = {micro * accumulation * dp}"
        )
    if total is not None and micro is not None and total % (micro * dp):
        raise ValueError(
            f"DeepSpeed config: train_batch_size {total} is not a multiple of "
            f"train_micro_batch_size_per_gpu {micro} x data-parallel size {dp}"
        )


def _enabled(section: Any) -> bool:
    return isinstance(section, dict) and bool(section.get("enabled", False))


def _offloaded(section: Any) -> bool:
    return isinstance(section, dict) and section.get("device", "none") not in ("none", None)
