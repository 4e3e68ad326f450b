"""The events the control plane reads: one JSON object per line on stdout, flushed.

Cloud Logging turns each line into a jsonPayload and lifts `severity` and `message`; the control
plane relies on `event` and the fields below (DESIGN.md, "Contract between trainers and the
control plane"). Only rank 0 prints step, checkpoint, eval, preemption and finish events; every
rank prints `run_started` and errors.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from typing import Any

from contract import events as contract_events


def emit(event: str, message: str, severity: str = "INFO", **fields: Any) -> None:
    """Print one event. EVENT is one of the contract's names (contract/events.py): a name the
    control plane does not know would reach it as an unreadable line."""
    if event not in contract_events.EVENTS:
        raise ValueError(f"{event!r} is not an event of the contract")
    record = {"severity": severity, "message": message, "event": event, **fields}
    line = json.dumps(_finite(record), allow_nan=False, separators=(",", ":"))
    sys.stdout.write(line + "\n")
    sys.stdout.flush()  # a replica can be killed at any moment: never leave an event buffered


def run_started(
    rank: int,
    world_size: int,
    strategy: str,
    params: int,
    resumed_from_step: int | None,
    dims: dict[str, int] | None = None,
    shape: dict[str, int] | None = None,
    precision: str | None = None,
) -> None:
    """shape: n_layer, n_head, d_model, seq_len (with params, what the control plane's MFU
    needs); precision: fp32, bf16... the arithmetic the run's matrix products use."""
    extra: dict[str, Any] = dict(shape or {})
    if precision:
        extra["precision"] = precision
    degrees = " x ".join(f"{k}{v}" for k, v in (dims or {}).items() if v > 1)
    emit(
        contract_events.RUN_STARTED,
        f"rank {rank}/{world_size} started ({strategy}{', ' + degrees if degrees else ''}, "
        f"{params:,} parameters)",
        rank=rank,
        world_size=world_size,
        strategy=strategy,
        dims=dims or {"dp": world_size, "tp": 1, "pp": 1},
        params=params,
        resumed_from_step=resumed_from_step,
        **extra,
    )


def step(
    step: int, total_steps: int, loss: float, lr: float, tokens_per_s: float, step_time_s: float,
    rank_step_time_s: Sequence[float] | None = None,
) -> None:
    # Every few steps: each rank's own time in the step (straggler detection).
    per_rank = ({"rank_step_time_s": [round(s, 6) for s in rank_step_time_s]}
                if rank_step_time_s else {})
    emit(
        contract_events.STEP,
        f"step {step}/{total_steps} loss {loss:.4f}",
        step=step,
        total_steps=total_steps,
        loss=loss,
        lr=lr,
        tokens_per_s=round(tokens_per_s, 1),
        step_time_s=round(step_time_s, 6),
        **per_rank,
    )


def checkpoint_saved(step: int, path: str, size: int, seconds: float) -> None:
    emit(
        contract_events.CHECKPOINT_SAVED,
        f"checkpoint of step {step} saved to {path}",
        step=step,
        path=path,
        bytes=size,
        seconds=round(seconds, 3),
    )


def checkpoint_deleted(step: int | None, path: str) -> None:
    emit(contract_events.CHECKPOINT_DELETED,
         f"checkpoint of step {step} deleted by rotation ({path})", step=step, path=path)


def resumed(step: int, path: str) -> None:
    emit(contract_events.RESUMED, f"resumed from step {step} ({path})", step=step, path=path)


def preempted(signal_name: str, step: int, checkpoint_path: str | None) -> None:
    where = f"checkpoint {checkpoint_path}" if checkpoint_path else "no checkpoint directory"
    emit(
        contract_events.PREEMPTED,
        f"{signal_name} received: stopped after step {step}, {where}",
        severity="WARNING",
        signal=signal_name,
        step=step,
        checkpoint_path=checkpoint_path,
    )


def evaluation(step: int, metrics: dict[str, float]) -> None:
    shown = ", ".join(f"{k} {v:.4f}" for k, v in metrics.items())
    emit(contract_events.EVAL, f"eval at step {step}: {shown}", step=step, metrics=metrics)


def tracking(provider: str, run_url: str, **fields: Any) -> None:
    """Where the run is tracked besides the control plane (wandb, vertex_experiments,
    tensorboard); run_url is "" when none can be given (an offline run with no entity)."""
    where = run_url or fields.get("run_dir", "?")
    emit(contract_events.TRACKING, f"tracked in {provider}: {where}",
         provider=provider, run_url=run_url, **fields)


def run_finished(step: int, final_loss: float | None, wall_s: float, **extra: Any) -> None:
    emit(
        contract_events.RUN_FINISHED,
        f"finished at step {step} in {wall_s:.1f} s",
        step=step,
        final_loss=final_loss,
        wall_s=round(wall_s, 3),
        **extra,
    )


def error(rank: int | None, exc: BaseException) -> None:
    emit(
        contract_events.ERROR,
        f"{type(exc).__name__}: {exc}",
        severity="ERROR",
        rank=rank,
        error_type=type(exc).__name__,
    )


def _finite(value: Any) -> Any:
    """NaN/inf are not JSON: a line holding them would reach Cloud Logging as plain text."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
