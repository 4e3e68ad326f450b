"""The DeepSpeed JSON a zero1/zero2/zero3 job runs with, written from the job request.

Pure functions. The request's ``deepspeed`` section holds what the form asks (offload, clipping,
optimizer, scheduler, fp16 loss scaling, ZeRO buckets and an ``extra`` object for any other
DeepSpeed key); its ``batch`` section and ``precision`` are shared with the other strategies.

DeepSpeed's batch rule: train_batch_size = train_micro_batch_size_per_gpu x
gradient_accumulation_steps x data-parallel size. ``resolve_batch`` derives the missing numbers
from the given ones and says which one is wrong when they disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

OPTIMIZERS = ("AdamW", "Adam")
SCHEDULERS = ("WarmupLR", "WarmupDecayLR")
# DeepSpeed's own defaults for dynamic fp16 loss scaling (loss_scale 0 = dynamic).
FP16_DEFAULTS = {"initial_scale_power": 16, "loss_scale_window": 1000, "hysteresis": 2,
                 "min_loss_scale": 1}
ZERO_INTS = ("allgather_bucket_size", "reduce_bucket_size")
ZERO_FLAGS = ("overlap_comm", "reduce_scatter", "contiguous_gradients", "allgather_partitions")
OPTIMIZER_DEFAULTS = {"lr": 1e-3, "betas": [0.9, 0.999], "eps": 1e-8, "weight_decay": 0.01}
# Keys the form writes; ``extra`` may add any other top-level DeepSpeed key.
GENERATED_KEYS = frozenset({
    "train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
    "gradient_clipping", "bf16", "fp16", "optimizer", "scheduler", "zero_optimization",
})


@dataclass(frozen=True)
class Batch:
    global_batch_size: int
    micro_batch_size: int
    gradient_accumulation_steps: int


def _positive(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return None
    return value


def _near_multiples(unit: int, around: int) -> tuple[str, ...]:
    """Multiples of ``unit`` next to ``around``: the values a batch size could take."""
    k = max(around // unit, 1)
    return tuple(str(unit * n) for n in sorted({max(k, 1), k + 1, max(k - 1, 1)}))


def resolve_batch(batch: dict[str, Any], dp: int) -> tuple[Batch | None, dict[str, list[str]],
                                                          dict[str, tuple[str, ...]]]:
    """(the batch, errors keyed 'batch.<field>', suggestions) for a data-parallel size ``dp``.

    None when the request gives no batch numbers (the trainer's own defaults apply).
    """
    errors: dict[str, list[str]] = {}
    suggestions: dict[str, tuple[str, ...]] = {}
    names = ("global_batch_size", "micro_batch_size", "gradient_accumulation_steps")
    given: dict[str, int] = {}
    for name in names:
        value = batch.get(name)
        if value in (None, "", 0):
            continue
        number = _positive(value)
        if number is None:
            errors[f"batch.{name}"] = [f"batch.{name} must be a whole number of at least 1, "
                                       f"got {value!r}"]
        else:
            given[name] = number
    if errors or not given:
        return None, errors, suggestions
    g = given.get("global_batch_size")
    m = given.get("micro_batch_size")
    a = given.get("gradient_accumulation_steps")
    rule = "global batch = micro batch x gradient accumulation x data-parallel size"
    if m is None and a is not None and g is None:
        errors["batch.gradient_accumulation_steps"] = [
            "gradient_accumulation_steps alone does not make a batch: give micro_batch_size "
            f"(or global_batch_size) too; {rule}"]
        return None, errors, suggestions
    if g is not None and m is not None and a is not None:
        if g != m * a * dp:
            key = "batch.global_batch_size"
            errors[key] = [f"global batch {g} must equal micro batch {m} x gradient "
                           f"accumulation {a} x data-parallel size {dp} = {m * a * dp}"]
            suggestions[key] = (str(m * a * dp),)
            return None, errors, suggestions
        return Batch(g, m, a), errors, suggestions
    if g is not None and m is not None:
        if g % (m * dp):
            key = "batch.global_batch_size"
            errors[key] = [f"global batch {g} is not a multiple of micro batch {m} x "
                           f"data-parallel size {dp} = {m * dp}, so no whole number of "
                           f"gradient accumulation steps fits ({rule})"]
            suggestions[key] = _near_multiples(m * dp, g)
            return None, errors, suggestions
        return Batch(g, m, g // (m * dp)), errors, suggestions
    if g is not None:
        a = a or 1
        if g % (a * dp):
            key = "batch.global_batch_size"
            errors[key] = [f"global batch {g} is not a multiple of gradient accumulation {a} "
                           f"x data-parallel size {dp} = {a * dp} ({rule})"]
            suggestions[key] = _near_multiples(a * dp, g)
            return None, errors, suggestions
        return Batch(g, g // (a * dp), a), errors, suggestions
    assert m is not None
    a = a or 1
    return Batch(m * a * dp, m, a), errors, suggestions


def _number(value: Any) -> Any:
    """2e8 -> 200000000: DeepSpeed reads bucket sizes as integers."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def deepspeed_json(section: dict[str, Any], *, stage: int, precision: str | None,
          batch: Batch | None) -> dict[str, Any]:
    """The DeepSpeed JSON object. Assumes ``check`` found nothing wrong."""
    ds: dict[str, Any] = {}
    if batch is not None:
        ds["train_batch_size"] = batch.global_batch_size
        ds["train_micro_batch_size_per_gpu"] = batch.micro_batch_size
        ds["gradient_accumulation_steps"] = batch.gradient_accumulation_steps
    clip = section.get("gradient_clipping")
    if clip is not None:
        ds["gradient_clipping"] = float(clip) if _is_number(clip) else clip
    if precision == "bf16":
        ds["bf16"] = {"enabled": True}
    elif precision == "fp16":
        ds["fp16"] = {"enabled": True, "loss_scale": 0,
                      **FP16_DEFAULTS, **_object(section.get("fp16"))}
    optimizer = _object(section.get("optimizer"))
    if optimizer:
        params = {**OPTIMIZER_DEFAULTS, **{k: v for k, v in optimizer.items() if k != "type"}}
        betas = params["betas"]
        if isinstance(betas, list | tuple) and all(_is_number(b) for b in betas):
            params["betas"] = [float(b) for b in betas]
        ds["optimizer"] = {"type": optimizer.get("type") or "AdamW", "params": params}
    scheduler = _object(section.get("scheduler"))
    if scheduler:
        peak = optimizer.get("lr", OPTIMIZER_DEFAULTS["lr"])
        params = {"warmup_min_lr": scheduler.get("warmup_min_lr", 0),
                  "warmup_max_lr": scheduler.get("warmup_max_lr", peak),
                  "warmup_num_steps": scheduler.get("warmup_num_steps", 1000)}
        if (scheduler.get("type") or "WarmupLR") == "WarmupDecayLR":
            params["total_num_steps"] = scheduler.get("total_num_steps")
        ds["scheduler"] = {"type": scheduler.get("type") or "WarmupLR", "params": params}
    zero: dict[str, Any] = {"stage": stage}
    for key in (*ZERO_INTS, *ZERO_FLAGS):
        value = _object(section.get("zero")).get(key)
        if value is not None:
            zero[key] = _number(value)
    if section.get("offload_optimizer"):
        zero["offload_optimizer"] = {"device": "cpu"}
    if section.get("offload_params"):
        zero["offload_param"] = {"device": "cpu"}
    ds["zero_optimization"] = zero
    ds.update(_object(section.get("extra")))
    return ds


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def deepspeed_errors(section: dict[str, Any], *, stage: int,
                     precision: str | None) -> dict[str, list[str]]:
    """Errors in the ``deepspeed`` section, keyed 'deepspeed.<field>'."""
    errors: dict[str, list[str]] = {}

    def add(key: str, message: str) -> None:
        errors.setdefault(f"deepspeed.{key}", []).append(message)

    if section.get("offload_params") and stage != 3:
        add("offload_params", f"offload_params moves parameters to the CPU, which only ZeRO "
            f"stage 3 does: use strategy zero3, not zero{stage}, or turn it off")
    clip = section.get("gradient_clipping")
    if clip is not None and (not _is_number(clip) or clip < 0):
        add("gradient_clipping", f"gradient_clipping must be a number >= 0 (0 turns it off), "
            f"got {clip!r}")
    for name in ("optimizer", "scheduler", "fp16", "zero", "extra"):
        if section.get(name) not in (None, {}) and not isinstance(section.get(name), dict):
            add(name, f"deepspeed.{name} must be an object of settings, got "
                f"{type(section.get(name)).__name__}")
    optimizer = _object(section.get("optimizer"))
    if optimizer:
        kind = optimizer.get("type") or "AdamW"
        if kind not in OPTIMIZERS:
            add("optimizer.type", f"optimizer {kind!r} is not one the form writes: use "
                f"{' or '.join(OPTIMIZERS)} (other optimizers go in deepspeed.extra)")
        lr = optimizer.get("lr", OPTIMIZER_DEFAULTS["lr"])
        if not _is_number(lr) or lr <= 0:
            add("optimizer.lr", f"optimizer.lr must be a positive number, got {lr!r}")
        betas = optimizer.get("betas", OPTIMIZER_DEFAULTS["betas"])
        if not (isinstance(betas, list | tuple) and len(betas) == 2
                and all(_is_number(b) and 0 <= b < 1 for b in betas)):
            add("optimizer.betas", f"optimizer.betas must be two numbers in [0, 1) such as "
                f"[0.9, 0.999], got {betas!r}")
    scheduler = _object(section.get("scheduler"))
    if scheduler:
        kind = scheduler.get("type") or "WarmupLR"
        if kind not in SCHEDULERS:
            add("scheduler.type", f"scheduler {kind!r} is not one the form writes: use "
                f"{' or '.join(SCHEDULERS)}")
        warmup = scheduler.get("warmup_num_steps", 1000)
        total = scheduler.get("total_num_steps")
        if kind == "WarmupDecayLR" and not (isinstance(total, int) and total > 0):
            add("scheduler.total_num_steps", "WarmupDecayLR needs total_num_steps, the step "
                "at which the learning rate reaches 0")
        elif isinstance(total, int) and isinstance(warmup, int) and warmup > total:
            add("scheduler.warmup_num_steps", f"warmup_num_steps {warmup} is longer than "
                f"total_num_steps {total}")
    if section.get("fp16") and precision != "fp16":
        add("fp16", f"fp16 loss scaling applies with precision fp16, not {precision or 'fp32'}")
    for key in _object(section.get("extra")):
        if key in GENERATED_KEYS:
            where = {"train_batch_size": "batch.global_batch_size",
                     "train_micro_batch_size_per_gpu": "batch.micro_batch_size",
                     "gradient_accumulation_steps": "batch.gradient_accumulation_steps",
                     "bf16": "precision", "fp16": "precision"}.get(key, f"deepspeed.{key}")
            add(f"extra.{key}", f"{key} is written from the form's {where}: set it there, "
                "not in deepspeed.extra")
    return errors


def from_deepspeed_json(ds: dict[str, Any]
                        ) -> tuple[int, dict[str, Any], dict[str, Any], str | None]:
    """(stage, deepspeed section, batch section, precision) read back from a DeepSpeed JSON.

    The inverse of ``build`` for what the form writes; anything else lands in ``extra``.
    """
    ds = dict(ds)
    section: dict[str, Any] = {}
    batch: dict[str, Any] = {}
    for key, name in (("train_batch_size", "global_batch_size"),
                      ("train_micro_batch_size_per_gpu", "micro_batch_size"),
                      ("gradient_accumulation_steps", "gradient_accumulation_steps")):
        if key in ds:
            batch[name] = ds.pop(key)
    if "gradient_clipping" in ds:
        section["gradient_clipping"] = ds.pop("gradient_clipping")
    precision = None
    if ds.get("bf16") == {"enabled": True}:
        precision = "bf16"
        ds.pop("bf16")
    fp16 = ds.get("fp16")
    if isinstance(fp16, dict) and fp16.get("enabled") is True and fp16.get("loss_scale") == 0:
        options = {k: v for k, v in fp16.items() if k not in ("enabled", "loss_scale")}
        if set(options) <= set(FP16_DEFAULTS):
            precision = "fp16"
            ds.pop("fp16")
            if options != FP16_DEFAULTS:
                section["fp16"] = {k: v for k, v in options.items() if FP16_DEFAULTS[k] != v}
    optimizer = ds.get("optimizer")
    if isinstance(optimizer, dict) and isinstance(optimizer.get("params"), dict):
        section["optimizer"] = {"type": optimizer.get("type"), **optimizer["params"]}
        ds.pop("optimizer")
    scheduler = ds.get("scheduler")
    if isinstance(scheduler, dict) and isinstance(scheduler.get("params"), dict):
        section["scheduler"] = {"type": scheduler.get("type"), **scheduler["params"]}
        ds.pop("scheduler")
    zero = dict(ds.pop("zero_optimization", None) or {})
    stage = zero.pop("stage", 0)
    if zero.pop("offload_optimizer", None) == {"device": "cpu"}:
        section["offload_optimizer"] = True
    if zero.pop("offload_param", None) == {"device": "cpu"}:
        section["offload_params"] = True
    known = {k: zero.pop(k) for k in (*ZERO_INTS, *ZERO_FLAGS) if k in zero}
    if known:
        section["zero"] = known
    if zero:
        # Keys the form has no field for: a parse that cannot be rebuilt; the caller compares.
        ds["zero_optimization"] = zero
    if ds:
        section["extra"] = ds
    return stage if isinstance(stage, int) else 0, section, batch, precision
