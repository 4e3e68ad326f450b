"""What the memory planner is told: the model's shape (ModelShape) and how the job spreads it over
its devices (Layout). Pure data and the sizes derived from it; vertexplan/memory.py plans from
them. No Django, no torch."""

from __future__ import annotations

from dataclasses import dataclass

# When nothing says how big the largest layer is: a share of the model that covers the embedding
# of GPT-style models from ~1B parameters up (it is 2% of Llama-7B, 0.4% of Llama-70B).
DEFAULT_LARGEST_LAYER_SHARE = 0.02
@dataclass(frozen=True)
class ModelShape:
    """What the planner needs to know about the model; only ``parameters`` is required."""

    parameters: int
    dtype: str = "fp32"  # training precision: fp32, bf16 or fp16 (mixed precision)
    # Parameters the optimizer updates; the rest (a frozen base under adapters) need only their
    # weights. None: all of them.
    trainable_parameters: int | None = None
    largest_layer_parameters: int | None = None
    hidden_size: int | None = None
    layers: int | None = None
    sequence_length: int | None = None
    attention_heads: int | None = None
    vocab_size: int | None = None
    # A gated MLP's width (Llama, Qwen, Gemma: SwiGLU/GeGLU, config.json's intermediate_size)
    # and grouped-query attention's key/value heads; None: the GPT's 4h MLP and as many key/value
    # heads as query heads.
    intermediate_size: int | None = None
    kv_heads: int | None = None
    micro_batch_size: int = 1
    activation_checkpointing: str = "none"  # none, selective or full (CHECKPOINTING)

    @property
    def largest_layer(self) -> int:
        """Parameters of the largest layer: given, or from the shape, or a share of the model."""
        if self.largest_layer_parameters:
            return self.largest_layer_parameters
        if self.hidden_size:
            # The embedding (vocab x hidden) or a 4h MLP projection, whichever is larger.
            return max(self.vocab_size or 0, 4 * self.hidden_size) * self.hidden_size
        return int(self.parameters * DEFAULT_LARGEST_LAYER_SHARE)

    @property
    def block_parameters(self) -> int | None:
        """One transformer block's parameters, from the shape (None without hidden_size and
        layers): attention's Q and output projections, K and V at kv_heads/heads of them,
        and the MLP: three h x I matrices gated, two h x 4h in the GPT."""
        h, layers = self.hidden_size, self.layers
        if not (h and layers):
            return None
        heads = self.attention_heads or max(h // 128, 1)
        kv = (self.kv_heads or heads) / heads
        mlp = 3 * h * self.intermediate_size if self.intermediate_size else 8 * h * h
        return min(int(h * h * (2 + 2 * kv) + mlp), self.parameters // layers)

    @property
    def outside_blocks_parameters(self) -> int | None:
        """What is not in a block (the embeddings, the head, the final norm): FSDP's root unit."""
        block = self.block_parameters
        if block is None or not self.layers:
            return None
        return max(self.parameters - self.layers * block, 0)


@dataclass(frozen=True)
class Layout:
    """How the job spreads the model: the strategy and the devices it runs on."""

    strategy: str  # ddp, fsdp, zero1, zero2, zero3, tpu_jax, tpu_xla
    devices_per_node: int
    nodes: int
    fsdp_mode: str = "full_shard"
    fsdp_shard_size: int = 0  # hybrid_shard group; 0 = the devices of one node
    offload_optimizer: bool = False
    offload_params: bool = False
    tensor_parallel: int = 1
    pipeline_parallel: int = 1
    tpu_sharding: str = "replicated"  # replicated or fsdp (JAX / PyTorch-XLA SPMD)
    pipeline_schedule: str = "1f1b"  # gpipe, 1f1b or interleaved_1f1b
    virtual_stages: int = 1  # pipeline stages per pipeline rank (interleaved_1f1b)
    microbatches: int = 0  # micro-batches per step through the pipeline; 0 = one per stage
    sequence_parallel: bool = False

    @property
    def world_size(self) -> int:
        return self.devices_per_node * self.nodes

    @property
    def model_parallel(self) -> int:
        return self.tensor_parallel * self.pipeline_parallel

    @property
    def data_parallel(self) -> int:
        return max(self.world_size // self.model_parallel, 1)

    @property
    def pipeline_microbatches(self) -> int:
        return self.microbatches or self.pipeline_parallel * self.virtual_stages

    @property
    def pipeline_bubble(self) -> float:
        """The share of a step each pipeline rank waits (0 without a pipeline)."""
        pp, v, m = self.pipeline_parallel, self.virtual_stages, self.pipeline_microbatches
        return (pp - 1) / (v * m + pp - 1)

    @property
    def microbatches_in_flight(self) -> float:
        """Micro-batches whose activations the first pipeline stage holds at its peak, in
        units of its own layers (1 without a pipeline: micro-steps run one after another)."""
        pp, v, m = self.pipeline_parallel, self.virtual_stages, self.pipeline_microbatches
        if pp == 1:
            return 1.0
        if self.pipeline_schedule == "gpipe":
            return float(m)
        if self.pipeline_schedule == "interleaved_1f1b":
            return min(pp, m) * (1 + (pp - 1) / (pp * v))
        return float(min(pp, m))
