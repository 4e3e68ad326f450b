"""The job templates the composer ships (../shared/PRESETS.md), as job requests.

A preset is read-only and shared by every team; a team saves its own templates (JobTemplate).
Presets that run the built-in trainer submit as they are; those that need something of yours
(the VLM fine-tune: your image + text pairs and the model's tokenizer) say so in ``needs``.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from vertexplan.catalog.storage import PERSISTENT_DISK_ANSWER


@dataclass(frozen=True)
class Preset:
    slug: str
    title: str
    description: str
    request: dict[str, Any]
    needs: str = ""  # what to change before it can run
    notes: tuple[str, ...] = field(default_factory=tuple)
    # Its local variant (scaled_down): request keys replaced to run the same strategy, degrees
    # and architecture at a size the local emulator holds. None: it runs locally as it is.
    scaled: dict[str, Any] | None = None

    def job_request(self) -> dict[str, Any]:
        """A copy to start a job from (the preset itself stays unchanged)."""
        return copy.deepcopy(self.request)

    def scaled_down(self) -> dict[str, Any]:
        """The job request of its local variant: the same strategy, parallel degrees, machines
        and architecture, with the model, its trainer arguments and the batch at a CPU size
        (a few layers, a narrow width, the same ratio of query to key/value heads), so the
        local emulator can run it; the preset as it is when it already runs locally."""
        request = self.job_request()
        if self.scaled is not None:
            request.update(copy.deepcopy(self.scaled))
            request["name"] = f"{request['name']}-scaled"
        return request


_A100_8 = {"machine_type": "a2-highgpu-8g", "accelerator_type": "NVIDIA_TESLA_A100",
           "accelerator_count": 8}


def _vlm_args(shape: str, data: str, context: int, steps: int,
              tokenizer: str | None = None) -> list[str]:
    """The built-in trainer fine-tuning a Qwen2-VL shape it ships (trainers/torch/models/
    shapes/SHAPE.json) on image + text pairs (a JSONL manifest, or the shipped vlm-demo)."""
    return ["--model-config", shape, "--vlm-data", data,
            *(["--tokenizer", tokenizer] if tokenizer else []),
            "--set", f"model.block_size={context}", "--steps", str(steps),
            "--warmup-steps", str(min(1000, steps // 10)), "--lr", "3e-4",
            "--weight-decay", "0.01", "--checkpoint-every", "500"]

PRESETS: tuple[Preset, ...] = (
    Preset(
        slug="vlm-finetune-4x8-a100-zero2",
        title="Multi-node VLM fine-tune: 4 nodes x 8 A100, ZeRO-2, Reduction Server, spot",
        description="Qwen2-VL-2B at its published shape (2.21B parameters: a 32-block vision "
                    "tower of 665M and a 28-layer decoder of width 1536, 12 query and 2 "
                    "key/value heads) fine-tuned on image + text pairs by the built-in trainer "
                    "on 32 A100 GPUs (a chief and 3 workers on a2-highgpu-8g): DeepSpeed ZeRO-2 "
                    "in bf16 with the trainer's AdamW (warmup, cosine decay), two Reduction "
                    "Server replicas, spot VMs restarted together, 48 hours at most.",
        needs="your image + text pairs and Qwen2-VL's tokenizer.json: point --vlm-data (a "
              "JSONL manifest of image, prompt and text) and --tokenizer at them, e.g. under "
              "the bucket's /gcs/ mount; add --init-from a folder of its safetensors to start "
              "from the published weights",
        notes=(
            "The material this preset comes from attaches a 2,000 GB persistent disk per node "
            "at /mnt/disks/training_data. " + PERSISTENT_DISK_ANSWER + ".",
            "Model memory quoted in the material (about 29 GB per GPU unsharded, 8 GB with "
            "ZeRO-2 on 8 GPUs) is replaced by the memory plan computed for this job.",
            "The material's fp16 loss scaling and DeepSpeed optimizer and scheduler sections "
            "are the built-in trainer's bf16, AdamW and learning-rate schedule here.",
            "Its scaled-down local variant trains a two-layer Qwen2-VL on the few image + "
            "text pairs shipped with the trainer (--vlm-data vlm-demo).",
        ),
        request={
            "name": "vlm-finetune-zero2",
            "strategy": "zero2",
            "precision": "bf16",
            "args": _vlm_args("qwen2-vl-2b", "/gcs/YOUR_BUCKET/vlm/train.jsonl", 1024, 100_000,
                              tokenizer="/gcs/YOUR_BUCKET/qwen2-vl-2b/tokenizer.json"),
            "env": {"NCCL_DEBUG": "INFO"},
            "chief": {**_A100_8, "boot_disk_type": "pd-ssd", "boot_disk_size_gb": 200},
            "workers": {"replica_count": 3},
            "reduction_server": {"replica_count": 2, "machine_type": "n1-highcpu-16"},
            "scheduling_strategy": "SPOT",
            "restart_job_on_worker_restart": True,
            "timeout_hours": 48,
            "batch": {"global_batch_size": 128, "micro_batch_size": 4,
                      "gradient_accumulation_steps": 1},
            "deepspeed": {
                "gradient_clipping": 1.0,
                "zero": {"allgather_bucket_size": 200_000_000,
                         "reduce_bucket_size": 200_000_000, "overlap_comm": True,
                         "reduce_scatter": True, "contiguous_gradients": True},
            },
            # What the args build (trainers/torch/models/shapes/qwen2-vl-2b.json), all trained.
            "model": {"parameters": 2_208_985_600, "hidden_size": 1536, "layers": 28,
                      "sequence_length": 1024, "attention_heads": 12, "vocab_size": 151_936},
        },
        scaled={"args": _vlm_args("qwen2-vl-2b-scaled", "vlm-demo", 64, 4),
                "batch": {"global_batch_size": 32, "micro_batch_size": 1,
                          "gradient_accumulation_steps": 1},
                "model": {"parameters": 139_936, "hidden_size": 48, "layers": 2,
                          "sequence_length": 64, "attention_heads": 6, "vocab_size": 320}},
    ),
    Preset(
        slug="single-node-fsdp-a100",
        title="Single node: 8 A100, FSDP full_shard, bf16",
        description="The common fine-tune: one a2-highgpu-8g, FSDP full_shard in bf16 on "
                    "standard VMs, with the built-in trainer.",
        request={
            "name": "fsdp-a100-8",
            "strategy": "fsdp",
            "fsdp": {"mode": "full_shard"},
            "precision": "bf16",
            "chief": {**_A100_8},
            "scheduling_strategy": "STANDARD",
        },
    ),
    Preset(
        slug="cheap-l4-ddp-spot",
        title="Cheap experiment: one L4, DDP, spot",
        description="One g2-standard-8 with an NVIDIA L4 on spot VMs: the trainer resumes from "
                    "its last checkpoint after a preemption.",
        request={
            "name": "l4-spot",
            "strategy": "ddp",
            "chief": {"machine_type": "g2-standard-8", "accelerator_type": "NVIDIA_L4",
                      "accelerator_count": 1},
            "scheduling_strategy": "SPOT",
        },
    ),
    Preset(
        slug="smallest-multi-gpu-t4",
        title="Smallest multi-GPU job: n1-standard-8 with 2 T4, DDP",
        description="Two NVIDIA T4 on one n1-standard-8: DDP across both GPUs.",
        request={
            "name": "t4-ddp",
            "strategy": "ddp",
            "chief": {"machine_type": "n1-standard-8", "accelerator_type": "NVIDIA_TESLA_T4",
                      "accelerator_count": 2},
        },
    ),
    Preset(
        slug="tpu-v5e-2x2-jax-spot",
        title="TPU v5e 2x2 (4 chips, one host), JAX, spot",
        description="ct5lp-hightpu-4t with topology 2x2: a single-host slice, so spot is allowed. "
                    "The built-in JAX trainer, data-parallel over the 4 chips.",
        request={
            "name": "jax-v5e-2x2",
            "strategy": "tpu_jax",
            "chief": {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "2x2"},
            "scheduling_strategy": "SPOT",
        },
    ),
    Preset(
        slug="tpu-v5e-4x4-jax",
        title="TPU v5e 4x4 (16 chips on 4 hosts), JAX, standard",
        description="ct5lp-hightpu-4t with topology 4x4: a TPU Pod slice, where Vertex does not "
                    "offer spot. The built-in JAX trainer, data-parallel over the 16 chips.",
        request={
            "name": "jax-v5e-4x4",
            "strategy": "tpu_jax",
            "chief": {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "4x4"},
            "scheduling_strategy": "STANDARD",
        },
    ),
    Preset(
        slug="cpu-ddp-demo",
        title="CPU demo: two replicas, DDP, the tiny preset",
        description="Two n1-standard-4 replicas training the tiny byte-level GPT: runs on the "
                    "local emulator in seconds.",
        request={
            "name": "cpu-ddp-demo",
            "strategy": "ddp",
            "args": ["--preset", "tiny", "--steps", "300", "--checkpoint-every", "50"],
            "chief": {"machine_type": "n1-standard-4"},
            "workers": {"replica_count": 1},
        },
    ),
)


def _gpt_args(layers: int, width: int, heads: int, context: int, steps: int) -> list[str]:
    """The built-in trainer's byte-level GPT at a large shape (12 x layers x width^2
    parameters, nearly all of them in the blocks)."""
    return ["--preset", "small", "--steps", str(steps), "--checkpoint-every", "500",
            "--set", f"model.n_layer={layers}", "--set", f"model.n_embd={width}",
            "--set", f"model.n_head={heads}", "--set", f"model.block_size={context}"]


def _llama_args(shape: str, context: int, steps: int) -> list[str]:
    """The built-in trainer's Hugging Face model at a shape it ships
    (trainers/torch/models/shapes/SHAPE.json, the model's published config.json), trained on
    the built-in corpus's bytes unless --data-files and --tokenizer name your data."""
    return ["--model-config", shape, "--set", f"model.block_size={context}",
            "--steps", str(steps), "--checkpoint-every", "500"]


_H100_8 = {"machine_type": "a3-highgpu-8g", "accelerator_type": "NVIDIA_H100_80GB",
           "accelerator_count": 8}

PRESETS += (
    Preset(
        slug="llama3-8b-tp2-fsdp4-a100",
        title="Llama-3-8B, tensor parallel 2 x FSDP 4 on one a2-highgpu-8g",
        description="Llama-3-8B's architecture at its published shape (8.03B parameters: 32 "
                    "layers, width 4096, 32 query and 8 key/value heads, SwiGLU 14,336, "
                    "128,256-token vocabulary) with a 4,096-token context, on 8 A100 40 GB: "
                    "each pair of GPUs splits every layer by heads (tensor parallel), FSDP2 "
                    "shards the rest over the 4 pairs; bf16, selective activation "
                    "checkpointing (without it the activations alone would not fit). "
                    "The built-in trainer builds it on the meta device and materialises each "
                    "rank's shard only.",
        notes=("torchrun starts one trainer process per GPU; the tensor-parallel pairs are "
               "neighbouring GPUs on NVLink.",
               "Add --data-files and --tokenizer (Llama 3's tokenizer.json) to train on your "
               "data, or --init-from a folder of its safetensors to fine-tune it."),
        request={
            "name": "llama3-8b-tp2-fsdp4",
            "strategy": "fsdp",
            "precision": "bf16",
            "args": _llama_args("llama-3-8b", 4096, 20000),
            "chief": {**_A100_8, "boot_disk_type": "pd-ssd", "boot_disk_size_gb": 200},
            "fsdp": {"mode": "full_shard"},
            "parallelism": {"tensor": 2},
            "batch": {"global_batch_size": 64, "micro_batch_size": 1},
            "model": {"parameters": 8_030_261_248, "hidden_size": 4096, "layers": 32,
                      "sequence_length": 4096, "attention_heads": 32, "vocab_size": 128_256,
                      "intermediate_size": 14_336, "kv_heads": 8,
                      "activation_checkpointing": "selective"},
        },
        scaled={"args": _llama_args("llama-3-8b-scaled", 64, 4),
                "batch": {"global_batch_size": 4, "micro_batch_size": 1},
                "model": {"parameters": 139_584, "hidden_size": 64, "layers": 2,
                          "sequence_length": 64, "attention_heads": 8, "vocab_size": 256,
                          "intermediate_size": 224, "kv_heads": 2,
                          "activation_checkpointing": "full"}},
    ),
    Preset(
        slug="llama3-70b-tp8-pp2-dp2-h100",
        title="Llama-3-70B, tensor 8 x pipeline 2 x data parallel 2 on 4 x a3-highgpu-8g",
        description="Llama-3-70B's architecture at its published shape (70.6B parameters: 80 "
                    "layers, width 8192, 64 query and 8 key/value heads, SwiGLU 28,672, "
                    "128,256-token vocabulary) with a 4,096-token context, on 32 H100 80 GB: "
                    "tensor parallel 8 inside each node over NVLink, a 1F1B pipeline of 2 "
                    "stages across nodes (32 micro-batches a step, a 3% bubble), FSDP2 over "
                    "the 2 data-parallel replicas; bf16, full activation checkpointing.",
        notes=("Node pairs form one pipeline (stages on different nodes); the two pipelines "
               "are data-parallel replicas.",
               "Each rank builds its stage's 40 layers on the meta device and materialises "
               "only its tensor-parallel slice of them."),
        request={
            "name": "llama3-70b-tp8-pp2",
            "strategy": "fsdp",
            "precision": "bf16",
            "args": _llama_args("llama-3-70b", 4096, 20000),
            "chief": {**_H100_8, "boot_disk_type": "pd-ssd", "boot_disk_size_gb": 500},
            "workers": {"replica_count": 3},
            "fsdp": {"mode": "full_shard"},
            "parallelism": {"tensor": 8, "pipeline": 2, "pipeline_schedule": "1f1b"},
            "batch": {"global_batch_size": 64, "micro_batch_size": 1},
            "model": {"parameters": 70_553_706_496, "hidden_size": 8192, "layers": 80,
                      "sequence_length": 4096, "attention_heads": 64, "vocab_size": 128_256,
                      "intermediate_size": 28_672, "kv_heads": 8,
                      "activation_checkpointing": "full"},
        },
        scaled={"args": _llama_args("llama-3-70b-scaled", 64, 4),
                "batch": {"global_batch_size": 4, "micro_batch_size": 1},
                "model": {"parameters": 3_475_712, "hidden_size": 256, "layers": 4,
                          "sequence_length": 64, "attention_heads": 64, "vocab_size": 256,
                          "intermediate_size": 896, "kv_heads": 8,
                          "activation_checkpointing": "full"}},
    ),
    Preset(
        slug="tpu-v5e-2x2-xla-fsdp-spot",
        title="TPU v5e 2x2 (4 chips, one host), PyTorch/XLA, 1.2B model FSDP, spot",
        description="A 1.2B-parameter GPT (24 layers, width 2048, 16 heads, 1,024-token "
                    "context) on ct5lp-hightpu-4t with topology 2x2, with the built-in "
                    "PyTorch/XLA trainer (python -m trainers.xla, the tpu-xla image): FSDP over "
                    "the 4 chips in bf16, as its weights, gradients and AdamW states would not "
                    "fit one chip's 16 GB replicated. A single-host slice, so spot is allowed.",
        notes=("Checkpoints are written with torch_xla's distributed checkpointing, each host "
               "its own shards, so a spot notice's 30 s is enough for the emergency one.",),
        request={
            "name": "xla-v5e-2x2-fsdp",
            "strategy": "tpu_xla",
            "precision": "bf16",
            "args": _gpt_args(24, 2048, 16, 1024, 20000),
            "chief": {"machine_type": "ct5lp-hightpu-4t", "tpu_topology": "2x2"},
            "tpu": {"sharding": "fsdp"},
            "scheduling_strategy": "SPOT",
            "batch": {"global_batch_size": 16, "micro_batch_size": 1},
            "model": {"parameters": 1_210_000_000, "hidden_size": 2048, "layers": 24,
                      "sequence_length": 1024, "attention_heads": 16},
        },
        scaled={"args": _gpt_args(2, 64, 4, 64, 4),
                "batch": {"global_batch_size": 4, "micro_batch_size": 1},
                "model": {"parameters": 120_576, "hidden_size": 64, "layers": 2,
                          "sequence_length": 64, "attention_heads": 4}},
    ),
)

BY_SLUG = {p.slug: p for p in PRESETS}
# Slugs presets had before they were replaced, so a saved link or script still finds them: the
# byte-level GPTs at 7B and 70B shapes, which the trainer could not run on the hardware they
# named, became the Llama presets of the same layouts.
RENAMED = {"gpt-7b-tp2-dp4-a100": "llama3-8b-tp2-fsdp4-a100",
           "gpt-70b-tp8-pp2-dp2-h100": "llama3-70b-tp8-pp2-dp2-h100"}


def get(slug: str) -> Preset | None:
    return BY_SLUG.get(RENAMED.get(slug, slug))
