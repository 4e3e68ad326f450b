"""Per-device memory of a training job: parameters, gradients, optimizer states, activations.

Pure functions, no Django and no torch. Sizes are in GiB (2**30 bytes), the unit DeepSpeed's
estimators print as "GB" and the one the accelerator table uses.

Model states follow DeepSpeed's own accounting, so the ZeRO figures agree with
``estimate_zero2_model_states_mem_needs`` / ``estimate_zero3_model_states_mem_needs`` (with
``zero_init`` and their default ``additional_buffer_factor`` of 1.5 for host memory):

* 16-bit mixed precision (bf16, fp16) keeps 2-byte parameters and gradients on the device and an
  fp32 master copy, fp32 gradients and Adam's two fp32 moments: 2 + 2 + 4 + 4 + 8 = 20 bytes a
  parameter before sharding, of which ZeRO shards what its stage says;
* fp32 training keeps 4-byte parameters and gradients and Adam's 8 bytes.

Activations are optional: with the model's shape (hidden size, layers, sequence length) they
follow Korthikanti et al., "Reducing Activation Recomputation in Large Transformer Models"
(2022): ``s*b*h*(34 + 5*a*s/h)`` bytes a layer and micro-batch in 16-bit, of which tensor
parallelism splits ``24 + 5*a*s/h`` (attention and MLP) and, with sequence parallelism, the
remaining 10 (norms, dropout) too; a gated MLP with grouped-query attention (Llama, Qwen,
Gemma: ``intermediate_size``, ``kv_heads``) has terms of its own (``_layer_terms``). Activation
checkpointing (``none``, ``selective``,
``full``): selective recomputation keeps everything but the attention scores, softmax and
its dropout, the ``5*a*s/h`` term (``34`` a layer left); full keeps each layer's input,
``2*s*b*h``, and one layer's activations while it is recomputed.

Pipeline parallelism (same paper, and Narayanan et al., "Efficient Large-Scale Language Model
Training on GPU Clusters Using Megatron-LM", 2021): the first stage holds L/pp layers and the
activations of every micro-batch it has run forward but not yet backward: all m of them under
GPipe, at most pp under 1F1B, and pp x (1 + (pp - 1) / (pp x v)) layers' worth under
interleaved 1F1B with v stages per rank. The pipeline bubble, the share of a step a rank
waits, is (pp - 1) / (v x m + pp - 1).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from vertexplan.checkpointing import CHECKPOINTING_NOTES

# The planner's inputs, named here too: callers read memory.ModelShape and memory.Layout.
from vertexplan.memory_shapes import DEFAULT_LARGEST_LAYER_SHARE, Layout, ModelShape

GIB = 2**30
DS_BUFFER_FACTOR = 1.5  # DeepSpeed's additional_buffer_factor default (host memory)
# CUDA context, NCCL and allocator slack: not in DeepSpeed's model-state estimate, but a job
# that fills a GPU to the last byte of its model states still runs out of memory.
GPU_RUNTIME_RESERVE_GIB = 1.0
GPU_RUNTIME = "CUDA context, NCCL buffers"
# A TPU has no CUDA or NCCL: what its runtime (libtpu) keeps for itself is the HBM that
# memory_stats()'s bytes_limit leaves below the chip's size, 0.25 GiB on a 32 GiB v4
# (34088157184 bytes, pytorch/xla#7086) and 0.75 GiB on a 32 GiB v6e (33550237696 bytes,
# vllm#16211); the larger is planned, as for every generation.
TPU_RUNTIME_RESERVE_GIB = 0.75
TPU_RUNTIME = "libtpu's reserved HBM"
DTYPES = ("fp32", "bf16", "fp16")
ZERO_STAGES = {"zero1": 1, "zero2": 2, "zero3": 3}
FSDP_MODES = ("full_shard", "shard_grad_op", "hybrid_shard")
@dataclass
class MemoryPlan:
    """Per-device memory in GiB, and the host memory per node that offloading needs."""

    strategy: str
    world_size: int
    data_parallel: int
    shard_group: int  # devices that share one copy of the sharded states
    parameters_gib: float
    gradients_gib: float
    optimizer_gib: float
    gathered_gib: float  # the largest layer gathered whole (ZeRO-3, FSDP)
    activations_gib: float | None  # None: the model's shape was not given
    reserve_gib: float
    host_per_node_gib: float
    runtime: str = ""  # what the reserve is for: GPU_RUNTIME, TPU_RUNTIME, "" on CPU
    device_memory_gib: float | None = None  # what one device has (None: unknown)
    host_memory_gib: float | None = None  # what one node (replica) has
    pipeline_bubble: float = 0.0  # share of a step a pipeline rank waits
    notes: list[str] = field(default_factory=list)

    @property
    def model_states_gib(self) -> float:
        """What DeepSpeed's estimators call the model states (their "per GPU" column)."""
        return self.parameters_gib + self.gradients_gib + self.optimizer_gib + self.gathered_gib

    @property
    def total_gib(self) -> float:
        return self.model_states_gib + (self.activations_gib or 0.0) + self.reserve_gib

    @property
    def fits(self) -> bool | None:
        if self.device_memory_gib is None:
            return None
        return self.total_gib <= self.device_memory_gib

    @property
    def host_fits(self) -> bool | None:
        if self.host_memory_gib is None:
            return None
        return self.host_per_node_gib <= self.host_memory_gib

    @property
    def headroom_gib(self) -> float | None:
        if self.device_memory_gib is None:
            return None
        return self.device_memory_gib - self.total_gib

    def as_dict(self) -> dict[str, object]:
        data = asdict(self)
        for name in ("model_states_gib", "total_gib", "fits", "host_fits", "headroom_gib"):
            data[name] = getattr(self, name)
        # To the KiB (1e-6 GiB): a toy model's per-device share is a few MB, which rounding
        # to the MB would turn into 0.
        return {k: round(v, 6) if isinstance(v, float) else v for k, v in data.items()}


@dataclass(frozen=True)
class _States:
    """Bytes per device of each model state, before dividing by GIB."""

    params: float
    grads: float
    optimizer: float
    gathered: float = 0.0
    host: float = 0.0


def _bytes(dtype: str) -> tuple[int, int, int]:
    """(weight, gradient, optimizer) bytes per parameter, unsharded.

    Mixed precision: 2-byte weights, and gradients of 2 bytes in 16 bit plus 4 in fp32 (the
    partition the optimizer steps on), and 12 bytes of optimizer state (fp32 master weights and
    Adam's two moments). fp32: 4, 4 and Adam's 8.
    """
    if dtype == "fp32":
        return 4, 4, 8
    return 2, 6, 12


def _zero(stage: int, p: float, n: int, layer: float, dtype: str, layout: Layout,
          nodes: int) -> _States:
    w, g, o = _bytes(dtype)
    gpus_per_node = layout.devices_per_node
    if stage in (1, 2) and layout.offload_optimizer:
        # Gradients and optimizer live on the host; the device keeps the 16-bit weights.
        host = p * max(4 * n, 16) * DS_BUFFER_FACTOR
        return _States(w * p, 0.0, 0.0, host=host)
    if stage == 1:
        # Optimizer states (and their fp32 gradient partition) sharded; 16-bit gradients whole.
        grad16 = g - 4 if dtype != "fp32" else g
        fp32_grads = 4 if dtype != "fp32" else 0
        return _States(w * p, grad16 * p + fp32_grads * p / n, o * p / n,
                       host=4 * p * gpus_per_node * DS_BUFFER_FACTOR)
    if stage == 2:
        return _States(w * p, g * p / n, o * p / n,
                       host=4 * p * gpus_per_node * DS_BUFFER_FACTOR)
    # Stage 3: everything sharded, the largest layer gathered whole (weights and gradients).
    gathered = 4 * layer if dtype != "fp32" else 8 * layer
    grads3 = 4 if dtype != "fp32" else g  # ZeRO-3 keeps no separate 16-bit gradient partition
    if layout.offload_optimizer and layout.offload_params:
        return _States(0.0, 0.0, 0.0, gathered, host=p * 18 / nodes * DS_BUFFER_FACTOR)
    if layout.offload_optimizer:
        return _States(w * p / n, 0.0, 0.0, gathered, host=p * 16 / nodes * DS_BUFFER_FACTOR)
    if layout.offload_params:
        return _States(0.0, grads3 * p / n, o * p / n, gathered,
                       host=w * p / nodes * DS_BUFFER_FACTOR)
    return _States(w * p / n, grads3 * p / n, o * p / n, gathered,
                   host=layer * 4 * gpus_per_node * DS_BUFFER_FACTOR)


def _fsdp(mode: str, p: float, n: int, layer: float, dtype: str, gpus_per_node: int,
          units: tuple[float, float] | None = None) -> _States:
    """``units``: (a block's parameters, the root unit's) on this device, where the shape gives
    them: FSDP2 as the trainers wrap it (each block, then the root) gathers those, not the
    largest single layer."""
    w, g, o = _bytes(dtype)
    if dtype != "fp32":
        # FSDP's mixed precision keeps sharded fp32 parameters, which the optimizer updates in
        # place (no separate master copy), gradients reduced to fp32 shards and Adam's two
        # fp32 moments; 16-bit weights exist only while gathered. The fp32 shard is the
        # parameters' own line, not a part of the optimizer's: booked there, the plan showed
        # parameters as 0.
        w, g, o = 4, 4, 8
    gathered = (4 if dtype != "fp32" else 8) * layer
    if units is not None:
        # Measured on the trainers (tests/trainers/test_hf_models.py, bench/memory_fit.py): at
        # the peak, in backward, a rank holds the block it computes gathered with its whole
        # gradients, the next block prefetched (its weights), and the root unit (embeddings,
        # head), which FSDP2 keeps gathered from the start of forward to the end of backward,
        # with its gradients.
        block, root = units
        each = 2 if dtype != "fp32" else 4  # a gathered weight or gradient
        gathered = each * (3 * block + 2 * root)
    host = 4 * layer * gpus_per_node * DS_BUFFER_FACTOR
    if mode == "shard_grad_op":
        # Weights stay gathered between forward and backward (ZeRO-2-like).
        full = 2 if dtype != "fp32" else 4
        return _States(full * p + w * p / n, g * p / n, o * p / n, 0.0, host)
    return _States(w * p / n, g * p / n, o * p / n, gathered, host)


def _activations(model: ModelShape, layout: Layout) -> float | None:
    if not (model.hidden_size and model.layers and model.sequence_length):
        return None
    s, b, h = model.sequence_length, model.micro_batch_size, model.hidden_size
    t = layout.tensor_parallel
    heads = model.attention_heads or max(h // 128, 1)
    split, whole = _layer_terms(model, heads, h)
    # Selective recomputation drops the attention scores, softmax and its dropout (5as/h),
    # which backward recomputes.
    split += 0 if model.activation_checkpointing == "selective" else 5 * heads * s / h
    if t == 1 or layout.sequence_parallel:
        per_layer = s * b * h * (whole + split) / t
    else:
        per_layer = s * b * h * (whole + split / t)
    # The first pipeline stage: its layers, times the micro-batches it holds at its peak.
    layers = model.layers / layout.pipeline_parallel
    in_flight = layout.microbatches_in_flight
    if model.activation_checkpointing == "full":
        # Each layer's input is kept; one layer at a time is recomputed in full.
        total = 2 * s * b * h / (t if layout.sequence_parallel else 1) * layers * in_flight
        total += per_layer
    else:
        total = per_layer * layers * in_flight
    return total * (2 if model.dtype == "fp32" else 1)


def _layer_terms(model: ModelShape, heads: int, h: int) -> tuple[float, float]:
    """A layer's activations besides the attention scores, in units of s*b*h 16-bit values:
    what tensor parallelism splits, and what it does not (split by sequence parallelism only).

    The GPT (Korthikanti et al.): 24 split (Q and K 4, V 2, the projection's input 2, the 4h
    MLP's GeLU input and output 16) and 10 whole (the norms' inputs 4, the inputs of the QKV
    and first MLP products 4, two dropout masks 2). A gated MLP of width I with grouped-query
    attention (Llama, Qwen, Gemma): Q and the projection's input 2 each, K and V 2 x kv/a each,
    the gate's and up products' outputs, the activation's output and their product 8I/h; whole
    8, as there is no dropout."""
    if not model.intermediate_size:
        return 24.0, 10.0
    kv = (model.kv_heads or heads) / heads
    return 4 + 4 * kv + 8 * model.intermediate_size / h, 8.0


def plan(model: ModelShape, layout: Layout, *, device_memory_gib: float | None = None,
         host_memory_gib: float | None = None, gpu: bool = True) -> MemoryPlan:
    """The memory plan of one device of this job. Raises ValueError for inputs it cannot plan.

    ``gpu``: the job runs on accelerators, whose runtime keeps memory of its own (a TPU's when
    the strategy is a TPU one: tpu_jax, tpu_xla); False for CPU training."""
    _check(model, layout)
    notes: list[str] = []
    trainable = model.trainable_parameters or model.parameters
    states, shard = _trained_states(model, layout, notes)
    if model.parameters - trainable:
        states = _with_frozen(states, model, layout, shard, notes)
    if states.gathered and not model.largest_layer_parameters and not model.hidden_size:
        notes.append(f"largest layer assumed {DEFAULT_LARGEST_LAYER_SHARE:.0%} of the model; "
                     "give largest_layer_parameters or hidden_size for a closer figure")
    # The composer refuses a GPU strategy on a TPU machine and the reverse, so the strategy
    # says which runtime the devices have.
    tpu = layout.strategy.startswith("tpu")
    activations = _activations(model, layout)
    if activations is None:
        notes.append("activations not estimated: give hidden_size, layers and "
                     "sequence_length to include them")
    elif model.activation_checkpointing in CHECKPOINTING_NOTES:
        notes.append(CHECKPOINTING_NOTES[model.activation_checkpointing])
    if layout.pipeline_parallel > 1:
        notes.append(
            f"pipeline {layout.pipeline_schedule} over {layout.pipeline_parallel} ranks"
            + (f" x {layout.virtual_stages} stages" if layout.virtual_stages > 1 else "")
            + f", {layout.pipeline_microbatches} micro-batches a step: the first stage holds "
            f"{layout.microbatches_in_flight:g} micro-batches of activations; each rank waits "
            f"{layout.pipeline_bubble:.0%} of a step (the bubble)")
    return MemoryPlan(
        strategy=layout.strategy,
        world_size=layout.world_size,
        data_parallel=layout.data_parallel,
        shard_group=shard,
        parameters_gib=states.params / GIB,
        gradients_gib=states.grads / GIB,
        optimizer_gib=states.optimizer / GIB,
        gathered_gib=states.gathered / GIB,
        activations_gib=None if activations is None else activations / GIB,
        reserve_gib=(0.0 if not gpu else TPU_RUNTIME_RESERVE_GIB if tpu
                     else GPU_RUNTIME_RESERVE_GIB),
        runtime="" if not gpu else TPU_RUNTIME if tpu else GPU_RUNTIME,
        pipeline_bubble=layout.pipeline_bubble,
        host_per_node_gib=states.host / GIB,
        device_memory_gib=device_memory_gib,
        host_memory_gib=host_memory_gib,
        notes=notes,
    )


def _check(model: ModelShape, layout: Layout) -> None:
    if model.parameters <= 0:
        raise ValueError("the model needs a positive parameter count")
    if model.dtype not in DTYPES:
        raise ValueError(f"dtype {model.dtype!r}: use {', '.join(DTYPES)}")
    if layout.devices_per_node < 1 or layout.nodes < 1:
        raise ValueError("a job has at least one device on one node")
    trainable = model.trainable_parameters or model.parameters
    if not 0 < trainable <= model.parameters:
        raise ValueError("trainable parameters must be between 1 and the parameter count")


def _trained_states(model: ModelShape, layout: Layout, notes: list[str]) -> tuple[_States, int]:
    """The trainable parameters' states per device under the layout's strategy, and the size of
    the group they are sharded over (1: not sharded)."""
    trainable = model.trainable_parameters or model.parameters
    # Tensor and pipeline parallelism give each device its slice of the model first.
    p = trainable / layout.model_parallel
    layer = model.largest_layer / layout.tensor_parallel
    dp = layout.data_parallel
    strategy = layout.strategy
    if strategy in ZERO_STAGES:
        states = _zero(ZERO_STAGES[strategy], p, dp, layer, model.dtype, layout, layout.nodes)
        if model.dtype == "fp32":
            notes.append("DeepSpeed's estimators assume 16-bit training; fp32 is planned with "
                         "4-byte weights and gradients")
        if layout.offload_params and not layout.offload_optimizer:
            notes.append("parameter offload without optimizer offload is outside DeepSpeed's "
                         "estimator; planned from the same per-parameter bytes")
        return states, dp
    if strategy == "fsdp" or (strategy.startswith("tpu") and layout.tpu_sharding == "fsdp"):
        mode = layout.fsdp_mode if strategy == "fsdp" else "full_shard"
        shard = dp
        if mode == "hybrid_shard":
            shard = min(layout.fsdp_shard_size or layout.devices_per_node, dp)
            notes.append(f"hybrid_shard: states sharded over groups of {shard} devices, "
                         f"replicated across {max(dp // shard, 1)} groups")
        return _fsdp(mode, p, shard, layer, model.dtype, layout.devices_per_node,
                     _units(model, layout)), shard
    w, g, o = _bytes(model.dtype)
    if model.dtype != "fp32":
        # Autocast keeps fp32 weights and gradients; no separate master copy.
        w, g, o = 4, 4, 8
    grads = g * p
    if strategy == "ddp" and layout.data_parallel > 1 and layout.model_parallel == 1:
        # DDP's reducer copies the gradients into buckets of its own to all-reduce them (the
        # trainers keep PyTorch's default, gradient_as_bucket_view off): a second copy,
        # measured (bench/memory_fit.py).
        grads *= 2
        notes.append("DDP's gradient buckets: a second copy of the gradients")
    states = _States(w * p, grads, o * p,
                     host=4 * p * layout.devices_per_node * DS_BUFFER_FACTOR)
    if strategy.startswith("tpu"):
        notes.append("TPU data parallel keeps a full copy per chip; a sharded program "
                     "(tpu sharding fsdp) needs about 1/N of it")
    return states, 1


def _units(model: ModelShape, layout: Layout) -> tuple[float, float] | None:
    """(a block, the root unit) in parameters on one device: sliced by tensor parallelism, the
    root split between the first and last pipeline stages. None: the shape does not say, or
    the largest layer was given (the planner then gathers that)."""
    block, root = model.block_parameters, model.outside_blocks_parameters
    if block is None or root is None or model.largest_layer_parameters:
        return None
    t, pp = layout.tensor_parallel, layout.pipeline_parallel
    return block / t, root / t / min(pp, 2)


def _with_frozen(states: _States, model: ModelShape, layout: Layout, shard: int,
                 notes: list[str]) -> _States:
    """Frozen weights are stored like the trainable ones but carry no gradients or optimizer
    states."""
    trainable = model.trainable_parameters or model.parameters
    frozen = (model.parameters - trainable) / layout.model_parallel
    strategy = layout.strategy
    weight = 4 if model.dtype == "fp32" else 2
    sharded = (strategy == "zero3" and not layout.offload_params) or (
        shard > 1 and strategy not in ZERO_STAGES
        and not (strategy == "fsdp" and layout.fsdp_mode == "shard_grad_op"))
    on_device = 0.0 if strategy == "zero3" and layout.offload_params else weight * frozen
    notes.append(f"{model.parameters - trainable:,} frozen parameters: weights only")
    return _States(states.params + on_device / (shard if sharded else 1), states.grads,
                   states.optimizer, states.gathered, states.host)
