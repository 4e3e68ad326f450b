"""Scheduling rules: strategy, durations, retries, spot on TPU Pods, FLEX_START."""

from __future__ import annotations

from collections.abc import Iterator

from vertexplan.catalog.enums import (
    DEPRECATED_STRATEGIES,
    FLEX_START_ACCELERATORS,
    FLEX_START_MAX_TIMEOUT_S,
    STRATEGY_CHOICES,
)
from vertexplan.catalog.errors import FieldError
from vertexplan.catalog.lookups import default_tpu_topology, get_tpu_topology, tpu_topologies
from vertexplan.catalog.records import TpuTopology
from vertexplan.catalog.rules._common import json_type, short, wrong_type
from vertexplan.catalog.suggest import did_you_mean, mean_clause, or_list
from vertexplan.catalog.values import format_seconds, parse_duration
from vertexplan.catalog.view import JobView, PoolView


def check_scheduling_object(view: JobView) -> Iterator[FieldError]:
    if view.scheduling.bad:
        yield wrong_type(view.scheduling, "an object (a Scheduling)", '{"strategy": "SPOT"}')


def check_strategy(view: JobView) -> Iterator[FieldError]:
    f = view.scheduling_field("strategy")
    if not f.present:
        return
    name = view.strategy
    if name is None:
        if isinstance(f.raw, str):
            close = did_you_mean(f.raw, STRATEGY_CHOICES)
            yield FieldError(
                f.path,
                f"scheduling.strategy {short(f.raw)} is not a Vertex scheduling strategy:"
                f" use {or_list(STRATEGY_CHOICES)}{mean_clause(close)}",
                close or STRATEGY_CHOICES,
            )
        else:
            yield FieldError(
                f.path,
                f"scheduling.strategy must be one of {or_list(STRATEGY_CHOICES)}, "
                f"got {json_type(f.raw)}",
                STRATEGY_CHOICES,
            )
    elif name in DEPRECATED_STRATEGIES:
        yield FieldError(
            f.path,
            f"scheduling.strategy {name} is deprecated: use STANDARD (on-demand VMs) or "
            "SPOT (preemptible, cheaper)",
            ("STANDARD", "SPOT"),
        )


def check_durations(view: JobView) -> Iterator[FieldError]:
    for key, zero_ok in (("timeout", False), ("maxWaitDuration", True)):
        f = view.scheduling_field(key, parse_duration)
        if not f.present:
            continue
        if f.bad:
            yield FieldError(
                f.path,
                f'scheduling.{key} must be a duration in seconds such as "172800s" '
                f"(48 hours), got {short(f.raw)}",
            )
        elif f.value < 0 or (f.value == 0 and not zero_ok):
            need = "zero or positive (0s waits without limit)" if zero_ok else "positive"
            yield FieldError(f.path, f"scheduling.{key} must be {need}, got {f.raw}")
    wait = view.scheduling_field("maxWaitDuration")
    strategy_unreadable = view.scheduling_field("strategy").present and view.strategy is None
    if wait.present and not strategy_unreadable and view.strategy != "FLEX_START":
        yield FieldError(
            wait.path,
            "scheduling.maxWaitDuration only applies to strategy FLEX_START (how long "
            "to wait for capacity): remove it or use FLEX_START",
        )


def check_retries(view: JobView) -> Iterator[FieldError]:
    flags = {}
    for key in ("restartJobOnWorkerRestart", "disableRetries"):
        f = view.scheduling_field(key)
        if f.present and not isinstance(f.raw, bool):
            yield wrong_type(f, "true or false")
        flags[key] = f
    restart, disable = flags["restartJobOnWorkerRestart"], flags["disableRetries"]
    if disable.raw is True and restart.raw is True:
        yield FieldError(
            disable.path,
            "disableRetries=true turns restartJobOnWorkerRestart off, so both "
            "cannot be true: keep restartJobOnWorkerRestart to restart the job when a worker "
            "restarts, or disableRetries to fail on the first error",
        )


def _tpu_pod(pool: PoolView) -> TpuTopology | None:
    """The pool's TPU topology when it is a multi-host slice (a TPU Pod)."""
    machine = pool.machine
    if machine is None or not machine.is_tpu or pool.tpu_topology.bad:
        return None
    name = pool.tpu_topology.value
    topo = (
        get_tpu_topology(machine.name, name)
        if name
        else default_tpu_topology(machine.name)
    )
    return topo if topo is not None and topo.is_pod else None


def check_spot_on_tpu_pods(view: JobView) -> Iterator[FieldError]:
    if view.strategy != "SPOT":
        return
    for pool in view.active_pools:
        pod = _tpu_pod(pool)
        if pod is None:
            continue
        single = [t.topology for t in tpu_topologies(pod.machine_type) if not t.is_pod]
        yield FieldError(
            view.scheduling_field("strategy").path,
            f"SPOT is not supported on TPU Pods: {pod.machine_type} with tpuTopology "
            f"{pod.topology} spans {pod.vms} VMs; use STANDARD, or a single-host topology "
            f"({or_list(single)})",
            ("STANDARD",),
        )


def _machine_config(pool: PoolView) -> tuple[object, ...]:
    return (
        pool.machine_type.value,
        pool.accelerator_type.value,
        pool.accelerators_requested,
        pool.tpu_topology.value,
    )


def check_flex_start(view: JobView) -> Iterator[FieldError]:
    if view.strategy != "FLEX_START":
        return
    gpus = or_list(FLEX_START_ACCELERATORS)
    for pool in view.active_pools:
        machine = pool.machine
        if machine is None or not pool.accelerators_readable:
            continue
        acc = pool.accelerator_type.value
        if acc not in FLEX_START_ACCELERATORS:
            path = pool.accelerator_type.path if acc else pool.machine_type.path
            has = f"{acc} on {machine.name}" if acc else f"{machine.name} without GPUs"
            yield FieldError(
                path,
                f"FLEX_START needs {gpus} GPUs in every pool; workerPoolSpecs"
                f"[{pool.index}] has {has}: choose one of those GPUs (e.g. g2-standard-8 with "
                "NVIDIA_L4) or strategy STANDARD or SPOT",
            )
    timeout = view.scheduling_field("timeout", parse_duration)
    if timeout.value is not None and timeout.value > FLEX_START_MAX_TIMEOUT_S:
        yield FieldError(
            timeout.path,
            f"FLEX_START jobs run at most {format_seconds(FLEX_START_MAX_TIMEOUT_S)} "
            f"({FLEX_START_MAX_TIMEOUT_S}s); scheduling.timeout is "
            f"{format_seconds(timeout.value)}",
            (f"{FLEX_START_MAX_TIMEOUT_S}s",),
        )
    pools = [p for p in view.active_pools if p.machine is not None]
    if not pools:
        return
    first = pools[0]
    for pool in pools[1:]:
        if _machine_config(pool) != _machine_config(first):
            yield FieldError(
                pool.machine_spec.path,
                f"FLEX_START needs the same machine config in every pool:"
                f" workerPoolSpecs[{pool.index}] differs from workerPoolSpecs[{first.index}] "
                f"({_describe(first)})",
            )


def _describe(pool: PoolView) -> str:
    text = str(pool.machine_type.value)
    if pool.accelerator_type.value:
        text += f" with {pool.accelerators_requested} {pool.accelerator_type.value}"
    return text
