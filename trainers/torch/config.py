"""The PyTorch trainer's configuration: every trainer's fields (trainers/config.py) plus the
strategy, the parallel degrees and the devices, and the readers of the JSON the control plane
passes. The checks against the world size and the model are trainers/torch/validation.py's.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field

from trainers.config import ModelConfig, RunConfig
from trainers.config import preset as shared_preset
from trainers.stream.config import StreamConfig

FSDP_MODES = ("full_shard", "shard_grad_op", "hybrid_shard")
ZERO_STAGES = {"zero1": 1, "zero2": 2, "zero3": 3}


@dataclass(frozen=True)
class FSDPConfig:
    """FSDP2 (`fully_shard`) settings: `--fsdp-config PATH` (a JSON object with these keys),
    `--fsdp-mode`, or `--set fsdp.shard_size=8`."""

    # full_shard: parameters are re-sharded after forward (least memory, a second all-gather
    # in backward); shard_grad_op: kept gathered until backward ends (ZeRO-2-like);
    # hybrid_shard: sharded within a group of `shard_size` ranks, replicated across groups.
    mode: str = "full_shard"
    shard_size: int = 0  # hybrid_shard group size; 0 = the processes of one node (its GPUs)


@dataclass(frozen=True)
class TrainConfig(RunConfig):
    strategy: str = "ddp"

    # Parallelism degrees (torchtitan's parallel dims): dp x tp x pp must equal WORLD_SIZE.
    # With tp or pp above 1, ddp or fsdp runs over the dp dimension of one device mesh
    # (pp, dp, tp), tp innermost: the ranks of a tensor-parallel group share a node.
    dp: int = 0  # data-parallel degree; 0 = WORLD_SIZE / (tp x pp)
    tp: int = 1  # tensor-parallel degree: ranks that split every layer's matrices by heads
    pp: int = 1  # pipeline-parallel degree: ranks that hold consecutive groups of layers
    pp_schedule: str = "1f1b"  # gpipe | 1f1b | interleaved_1f1b (pp > 1)
    pp_virtual_stages: int = 1  # pipeline stages per pp rank; above 1: interleaved_1f1b
    sequence_parallel: bool = False  # tp > 1: norms and dropout split along the sequence too
    fsdp: FSDPConfig = field(default_factory=FSDPConfig)
    # The DeepSpeed JSON read from --deepspeed-config (zero1/2/3); None = built from this config.
    deepspeed: dict[str, typing.Any] | None = None
    offload_optimizer: bool = False  # zero1/2/3: optimizer states and step on the CPU
    offload_params: bool = False  # zero3: parameters on the CPU between uses

    # Sequences per rank per forward pass; 0 = the whole rank batch. With pp > 1 it is the
    # pipeline's micro-batch, and 0 = one micro-batch per pipeline stage.
    micro_batch_size: int = 0
    # Each block's activations: none kept back; selective = the matrix products' outputs kept,
    # attention and elementwise ops recomputed in backward; full = only the block's input
    # kept, the whole block recomputed (trainers/torch/activation_checkpointing.py).
    activation_checkpointing: str = "none"
    compile_blocks: bool = False  # torch.compile each block's forward
    # Write checkpoints in the background (ddp, fsdp): training goes on while they are written,
    # and they are committed at the first step boundary where every rank has finished.
    async_checkpoint: bool = False

    # Streamed files (--data-files, trainers/stream/) instead of the corpus of trainers/corpus.py.
    stream: StreamConfig = field(default_factory=StreamConfig)

    # A Hugging Face causal LM instead of the preset's GPT (trainers/torch/models/): its
    # config.json (--model-config), safetensors weights to start from (--init-from, whose
    # config.json applies unless --model-config names one), the tokenizer.json the text is
    # tokenized with (--tokenizer; else bytes), and where the final model is written in
    # Hugging Face's layout (--export-hf; default: model_dir), in files of at most
    # export_shard_bytes.
    hf_config: str | None = None
    init_from: str | None = None
    tokenizer: str | None = None
    export_hf: str | None = None
    export_shard_bytes: int = 5 * 1024**3
    # A VLM's image + text pairs (--vlm-data, a JSONL manifest: trainers/torch/vlm_data.py),
    # each image resized to at most vlm_max_pixels (the image processor's max_pixels).
    vlm_data: str | None = None
    vlm_max_pixels: int = 28 * 28 * 256

    device: str = "auto"  # auto (a GPU when there is one) | cpu | cuda
    cpu_threads: int = 1  # torch threads per process on CPU (replicas often share a few cores)
    collective_timeout_s: int = 600  # how long a rank waits for the others before failing
    # Measurement runs (trainers/torch/memory_meter.py): every rank's peak tensor memory in
    # run_finished (measure_memory), and a limit past which the run fails, as a device of that
    # size would (memory_limit_mib; 0 = none, and no meter).
    measure_memory: bool = False
    memory_limit_mib: int = 0
    # Every this many steps (a logged one) the ranks gather each one's own time in a step
    # (from its start to the end of its last forward: the gradient collectives' waits left
    # out), its mean over the steps since the last report, printed as the step event's
    # rank_step_time_s for straggler detection; 0 = never.
    rank_times_every: int = 10
    # Faults for tests: the last rank blocks at this step of a first run, printing nothing, as
    # in a collective whose peer died (0 = never); rank debug_slow_rank sleeps
    # debug_slow_seconds in every step (a straggler); every rank's batch takes
    # debug_slow_data_seconds longer to fetch (a slow input pipeline: data_wait).
    debug_hang_at_step: int = 0
    debug_slow_rank: int = -1
    debug_slow_seconds: float = 0.0
    debug_slow_data_seconds: float = 0.0

    @classmethod
    def from_dict(cls, data: dict[str, typing.Any]) -> TrainConfig:
        values = dict(data)
        values["model"] = ModelConfig(**values.get("model", {}))
        values["fsdp"] = FSDPConfig(**values.get("fsdp", {}))
        values["stream"] = StreamConfig(**values.get("stream", {}))
        return cls(**values)


def preset(name: str) -> TrainConfig:
    return shared_preset(name, TrainConfig)


# CP_PARALLELISM_JSON's keys and their types: the degrees, and how the pipeline runs.
PARALLEL_KEYS: dict[str, type] = {
    "dp": int,
    "tp": int,
    "pp": int,
    "pp_schedule": str,
    "pp_virtual_stages": int,
    "sequence_parallel": bool,
}


def parallel_from_json(data: dict[str, typing.Any]) -> dict[str, typing.Any]:
    """The settings of a CP_PARALLELISM_JSON object ({"dp": D, "tp": T, "pp": P, ...})."""
    unknown = sorted(set(data) - set(PARALLEL_KEYS))
    if unknown:
        raise ValueError(
            f"parallelism: unknown keys {', '.join(unknown)}; valid: {', '.join(PARALLEL_KEYS)}"
        )
    for key, value in data.items():
        expected = PARALLEL_KEYS[key]
        if type(value) is not expected:
            raise ValueError(f"parallelism: {key} must be a {expected.__name__}, not {value!r}")
    return dict(data)


def fsdp_from_json(data: dict[str, typing.Any]) -> FSDPConfig:
    """An --fsdp-config file: a JSON object with FSDPConfig's keys."""
    defaults = FSDPConfig()
    valid = sorted(f.name for f in dataclasses.fields(FSDPConfig))
    for key, value in data.items():
        if key not in valid:
            raise ValueError(f"FSDP config: unknown key {key!r}; valid: {', '.join(valid)}")
        expected = type(getattr(defaults, key))
        if type(value) is not expected:
            raise ValueError(f"FSDP config: {key} must be a {expected.__name__}, not {value!r}")
    return FSDPConfig(**data)
