"""The memory plan of a composed job, and what to change when it does not fit.

The request's ``model`` section says how big the model is; the composed pools say on what it
runs. Without a ``model`` section there is no plan (and nothing to refuse). The plan says whose
model it sizes: the product's trainer's (a warning where its arguments train another) or the
team's own code's (plan_subject.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from vertexplan import memory, memory_text
from vertexplan.catalog.lookups import allowed_accelerators, get_accelerator, get_machine_type
from vertexplan.checkpointing import checkpointing_mode
from vertexplan.composer.build import Built
from vertexplan.composer.parallelism import GPU_STRATEGIES
from vertexplan.composer.plan_subject import whose_model
from vertexplan.composer.request import JobRequest
from vertexplan.perf import expected_step

MODEL_INTS = ("parameters", "largest_layer_parameters", "hidden_size", "layers",
              "sequence_length", "attention_heads", "vocab_size", "intermediate_size",
              "kv_heads")
# Bigger-memory machines to suggest, with the same number of devices where possible.
_ALTERNATIVES = ("a2-ultragpu-8g", "a3-highgpu-8g", "a3-ultragpu-8g", "a4-highgpu-8g")
MAX_SUGGESTED_REPLICAS = 64


@dataclass
class PlanResult:
    plan: memory.MemoryPlan | None = None
    errors: dict[str, list[str]] = field(default_factory=dict)
    # Out-of-memory findings: errors or warnings, as the team's memory policy says.
    overflows: dict[str, list[str]] = field(default_factory=dict)
    warnings: dict[str, list[str]] = field(default_factory=dict)
    suggestions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # The modelled step time, or why there is none (perf/expected_step.py).
    expected_step: expected_step.ExpectedStep | str | None = None
    # PRESETS.md's guidance: shown next to the form, never a reason to refuse.
    hints: list[str] = field(default_factory=list)


def _model(section: dict[str, Any], precision: str | None, micro: int,
           result: PlanResult) -> memory.ModelShape | None:
    values: dict[str, Any] = {}
    for name in MODEL_INTS:
        value = section.get(name)
        if value in (None, "", 0):
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            result.errors.setdefault(f"model.{name}", []).append(
                f"model.{name} must be a whole number of at least 1, got {value!r}")
            continue
        values[name] = value
    try:
        checkpointing = checkpointing_mode(section.get("activation_checkpointing"))
    except ValueError as exc:
        result.errors.setdefault("model.activation_checkpointing", []).append(str(exc))
    if "parameters" not in values:
        if values:
            result.errors.setdefault("model", []).append(
                "model.parameters is needed for a memory plan (the total parameter count, "
                "e.g. 7000000000)")
        return None
    if result.errors:
        return None
    return memory.ModelShape(
        dtype=precision if precision in memory.DTYPES else "fp32",
        micro_batch_size=micro,
        activation_checkpointing=checkpointing,
        **values)


def _layout(request: JobRequest, built: Built, dp_degrees: tuple[int, int]) -> tuple[
        memory.Layout, float | None, float | None, bool, list[str]]:
    notes: list[str] = []
    shapes = []
    nodes = 0
    for role in ("chief", "workers"):
        p = request.pools.get(role)
        shape = built.hardware.shapes.get(role)
        if p is None or shape is None:
            continue
        replicas = (p.replicas if p.replica_count else 1) or 1
        nodes += max(replicas, 1) * shape.vms
        shapes.append(shape)
    chief = shapes[0] if shapes else None
    per_node = max(chief.devices_per_vm, 1) if chief else 1
    gpu = bool(chief and chief.kind in ("gpu", "tpu") and chief.devices_per_vm)
    device_gib: float | None = None
    host_gib: float | None = None
    if shapes:
        if len({(s.machine_type, s.accelerator_type, s.devices_per_vm) for s in shapes}) > 1:
            notes.append("the pools differ: planned on the smallest device")
        if gpu:
            sizes = [s.device_memory_gb for s in shapes if s.device_memory_gb]
            device_gib = min(sizes) if sizes else None
        machines = [get_machine_type(s.machine_type) for s in shapes]
        hosts = [m.memory_gb for m in machines if m is not None and m.memory_gb]
        host_gib = min(hosts) if hosts else None
        if not gpu:
            device_gib = host_gib  # CPU training: a process's memory is the machine's
    t, p = dp_degrees
    fsdp = _section(request.fsdp)
    ds = _section(request.deepspeed)
    tpu = _section(request.tpu)
    parallel = _section(request.parallelism)
    batch = built.launch.batch
    # The built-in trainer cuts each rank's batch into micro-batches of the micro batch size;
    # with gradient accumulation the pipeline runs them all in one step.
    microbatches = batch.gradient_accumulation_steps if batch and p > 1 else 0
    layout = memory.Layout(
        strategy=request.strategy,
        devices_per_node=per_node,
        nodes=max(nodes, 1),
        fsdp_mode=fsdp.get("mode") or "full_shard",
        fsdp_shard_size=fsdp.get("shard_size") or 0,
        offload_optimizer=bool(ds.get("offload_optimizer")),
        offload_params=bool(ds.get("offload_params")),
        tensor_parallel=t,
        pipeline_parallel=p,
        tpu_sharding=tpu.get("sharding") or "replicated",
        pipeline_schedule=parallel.get("pipeline_schedule") or "1f1b",
        virtual_stages=parallel.get("virtual_stages") or 1,
        microbatches=microbatches if microbatches and microbatches > 1 else 0,
        sequence_parallel=parallel.get("sequence_parallel") is True,
    )
    return layout, device_gib, host_gib, gpu, notes


def _section(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def plan_for(request: JobRequest, built: Built) -> PlanResult:
    """The memory plan and the modelled step time, what would fit when it does not, and the
    strategy's hints."""
    result = _plan(request, built)
    result.hints = strategy_hints(request, built, result.plan)
    return result


def _plan(request: JobRequest, built: Built) -> PlanResult:
    result = PlanResult()
    section = request.model
    if section in (None, {}, ""):
        return result
    if not isinstance(section, dict):
        result.errors["model"] = ["model must be an object with parameters (and optionally "
                                  "hidden_size, layers, sequence_length)"]
        return result
    if built.launch.errors:
        return result  # a strategy that does not fit the job has no meaningful plan
    micro = built.launch.batch.micro_batch_size if built.launch.batch else 1
    shape = _model(section, request.precision, micro, result)
    if shape is None:
        return result
    parallel = _section(request.parallelism)
    degrees = (parallel.get("tensor") or 1, parallel.get("pipeline") or 1)
    layout, device_gib, host_gib, gpu, notes = _layout(request, built, degrees)
    try:
        plan = memory.plan(shape, layout, device_memory_gib=device_gib,
                           host_memory_gib=host_gib, gpu=gpu)
    except ValueError as exc:
        result.errors["model"] = [f"model: {exc}"]
        return result
    plan.notes[:0] = notes
    # Whose model this is: the trainer's own (its figures beside the plan's, a warning where
    # they differ) or the team's code (the plan sizes the fields as entered).
    whose = whose_model(request, built, shape.parameters)
    plan.notes.insert(0, whose.note)
    if whose.warning:
        result.warnings.setdefault("model.parameters", []).append(whose.warning)
    result.plan = plan
    result.expected_step = _expected_step(shape, layout, built)
    if plan.fits is False:
        fixes = _fixes(shape, layout, device_gib, host_gib, gpu, request, built)
        key = "model.parameters"
        result.overflows[key] = [
            f"the model does not fit: {memory_text.describe(plan)}"
            + (f"; what would fit: {', '.join(fixes)}" if fixes else
               "; use more devices, a larger accelerator or a smaller micro batch")]
        result.suggestions[key] = tuple(fixes)
    if plan.host_fits is False:
        offloading = layout.offload_optimizer or layout.offload_params
        message = (f"each node needs {plan.host_per_node_gib:.1f} GB of host memory for the "
                   f"model states (DeepSpeed's estimate with its 1.5x buffer), but the machine "
                   f"has {plan.host_memory_gib:g} GB")
        if offloading:
            # Offloaded states live in host memory for the whole run: as binding as the GPU's.
            result.overflows.setdefault("deepspeed.offload_optimizer", []).append(
                f"{message}: pick a machine with more memory, more replicas or offload less")
        else:
            # Without offload it is the peak while every process loads the model (less with
            # zero.Init or meta-device loading): worth knowing, not a reason to refuse.
            result.warnings.setdefault("model.parameters", []).append(
                f"{message} while every process loads the model; load it sharded "
                "(deepspeed.zero.Init, meta device) or use fewer processes per node")
    return result


def _expected_step(shape: memory.ModelShape, layout: memory.Layout,
                   built: Built) -> expected_step.ExpectedStep | str:
    machine = built.hardware.shapes.get("chief")
    if machine is None:
        return "no machine to model the step time on"
    batch = built.launch.batch
    global_batch = (batch.global_batch_size if batch
                    else shape.micro_batch_size * layout.data_parallel)
    return expected_step.expected_step(
        shape, layout, global_batch=global_batch,
        accelerator=machine.accelerator_type if machine.kind != "cpu" else None,
        machine_type=machine.machine_type, tpu=machine.kind == "tpu")


def _fixes(shape: memory.ModelShape, layout: memory.Layout, device_gib: float | None,
           host_gib: float | None, gpu: bool, request: JobRequest, built: Built) -> list[str]:
    """Strategies (on the same machines), then machines, that would fit."""
    if device_gib is None:
        return []
    found: list[str] = []
    candidates = [
        ("zero2", {"strategy": "zero2"}),
        ("zero3", {"strategy": "zero3"}),
        ("fsdp full_shard", {"strategy": "fsdp", "fsdp_mode": "full_shard"}),
        ("zero3 with offload_optimizer", {"strategy": "zero3", "offload_optimizer": True}),
        ("zero3 with offload_optimizer and offload_params",
         {"strategy": "zero3", "offload_optimizer": True, "offload_params": True}),
    ]
    tpu = built.hardware.topology.tpu
    if tpu:
        candidates = [("tpu sharding fsdp", {"tpu_sharding": "fsdp"})]
    for label, change in candidates:
        if label.split(" ", 1)[0] == layout.strategy and len(change) == 1:
            continue
        trial = memory.plan(shape, replace(layout, **change), device_memory_gib=device_gib,
                            host_memory_gib=host_gib, gpu=gpu)
        if trial.fits and trial.host_fits is not False:
            found.append(label)
    if found or tpu:
        return found[:3]
    # More replicas of the same machine: ZeRO-3 divides the states by the device count.
    for label, change in candidates[1:4:2]:
        for nodes in range(layout.nodes + 1, MAX_SUGGESTED_REPLICAS + 1):
            trial = memory.plan(shape, replace(layout, nodes=nodes, **change),
                                device_memory_gib=device_gib, host_memory_gib=host_gib, gpu=gpu)
            if trial.fits and trial.host_fits is not False:
                found.append(f"{label} on {nodes} replicas ({trial.world_size} devices)")
                break
    if not gpu:
        return found[:3]
    chief_machine = str(request.pools["chief"].machine_type or "")
    for machine in _ALTERNATIVES:
        if machine == chief_machine:
            continue
        for acc, counts in allowed_accelerators(machine).items():
            gib = get_accelerator(acc).memory_gb
            trial = memory.plan(shape, replace(layout, devices_per_node=max(counts)),
                                device_memory_gib=gib, host_memory_gib=None, gpu=True)
            if trial.fits:
                found.append(f"{machine} ({max(counts)} x {acc}, {gib:g} GB each)")
                break
        if len(found) >= 2:
            break
    return found


def strategy_hints(request: JobRequest, built: Built, plan: memory.MemoryPlan | None,
                   ) -> list[str]:
    """PRESETS.md's guidance: shown next to the form, never a reason to refuse."""
    hints: list[str] = []
    strategy = request.strategy
    params = plan and (request.model or {}).get("parameters")
    topology = built.hardware.topology
    gpu_nodes = topology.replicas if not topology.tpu else 0
    if params and strategy == "zero2" and params > 15e9:
        hints.append("ZeRO-3 is the usual choice above ~15B parameters")
    if params and strategy == "zero3" and params < 15e9:
        hints.append("ZeRO-2 usually suffices below ~15B parameters and communicates less")
    fsdp = _section(request.fsdp)
    if strategy == "fsdp" and gpu_nodes > 1 and (
            (fsdp.get("mode") or "full_shard") != "hybrid_shard"):
        hints.append("FSDP hybrid_shard is the usual choice across nodes: it shards within a "
                     "node and replicates across nodes")
    gpus = [str(request.pools[r].accelerator_type or "") for r in ("chief", "workers")
            if r in request.pools]
    if (any(g.startswith("NVIDIA") for g in gpus) and gpu_nodes >= 2
            and request.document.get("reduction_server") is None
            and (not params or params > 1e9) and strategy in GPU_STRATEGIES):
        hints.append("a Reduction Server speeds up all-reduce across 2+ GPU nodes for models "
                     "over ~1B parameters")
    if request.scheduling == "SPOT":
        hints.append("on spot VMs, checkpoint every 10-15 minutes; checkpoints go to the "
                     "job's gs:// output directory (AIP_CHECKPOINT_DIR)")
    return hints
