"""Vertex Model Garden's prebuilt vLLM serving container: the Model's container spec as Model
Garden builds it, and whether a model fits the GPUs of the machine it is deployed on.

The documented form, read 2026-11-29 from GoogleCloudPlatform/vertex-ai-samples at cc0d791
(2026-08-19), notebooks/community/model_garden/model_garden_huggingface_vllm_deployment.ipynb
(last changed 2026-02-05), its `deploy_model_vllm()`:
- image `us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-dockers/pytorch-vllm-serve:
  20251205_0916_RC01` (VLLM_DOCKER_URI);
- no command: the serving_container_args begin with the entrypoint itself, `python -m
  vllm.entrypoints.api_server`, then `--host=0.0.0.0 --port=8080 --model=<id or gs://>
  --tensor-parallel-size=<accelerator_count> --swap-space=16 --max-model-len=<n> --dtype=<d>
  --max-loras=1 --max-cpu-loras=8 --max-num-seqs=256 --disable-log-stats` and, when set,
  `--gpu-memory-utilization=<f>` (defaults there: 4096, "auto", 0.9);
- port 8080, predict route /generate, health route /ping, env MODEL_ID=<the model>, 16 GB of
  shared memory, a deployment timeout of 7200 s.
Model Garden's notebooks upload one Model per deployment, the GPU count in its args; the product
keeps one registry entry per GPU shape instead (the entry names its machine, and deploys only on
that many GPUs of that type).

UNCONFIRMED (VERTEX_FACTS.md A10 left these open; what the notebook shows is used): whether
later tags change the args; Vertex's own docs for the container. The answer of /generate on
Vertex (Model Garden's notebook prints each prediction as "Prompt:\\n...\\nOutput:\\n..." unless
the instance sets raw_response) differs from the product's server's {"text", "tokens"}.

The fit check is the one the issue asks for, and only that: the weights at the serving dtype
plus the KV cache of one sequence of max_model_len tokens (layers x 2 x kv_heads x head_dim x
bytes a token) against GPU memory x gpu_memory_utilization x tensor parallel size. vLLM also
keeps activations and CUDA graphs in that share, so a model that passes this can still be
refused by vLLM at start; one that fails it never loads.
"""

from __future__ import annotations

from dataclasses import dataclass

SOURCE = ("GoogleCloudPlatform/vertex-ai-samples@cc0d791 notebooks/community/model_garden/"
          "model_garden_huggingface_vllm_deployment.ipynb deploy_model_vllm(), read 2026-11-29")
IMAGE_URI = ("us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-dockers/"
             "pytorch-vllm-serve:20251205_0916_RC01")
# The image's repository: any tag of it is Model Garden's vLLM container.
IMAGE_REPOSITORY = IMAGE_URI.rsplit(":", 1)[0]
ENTRYPOINT = ("python", "-m", "vllm.entrypoints.api_server")
PORT = 8080
PREDICT_ROUTE = "/generate"
HEALTH_ROUTE = "/ping"
SHARED_MEMORY_MB = 16 * 1024
DEPLOYMENT_TIMEOUT_S = 7200
SWAP_SPACE_GB = 16
MAX_LORAS = 1
MAX_CPU_LORAS = 8
MAX_NUM_SEQS = 256

DEFAULT_MAX_MODEL_LEN = 4096  # the notebook's; never more than the model's own context
DEFAULT_DTYPE = "auto"
DEFAULT_GPU_MEMORY_UTILIZATION = 0.9
# vLLM's --dtype values (its engine args), with the bytes of one value; "auto" is the config's
# dtype, except that vLLM serves a float32 checkpoint at 16 bits (bfloat16 or float16).
DTYPE_BYTES = {"auto": 0, "bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4}
CONFIG_DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "float32": 2}  # as "auto" serves them
MIN_GPU_MEMORY_UTILIZATION = 0.05
MAX_GPU_MEMORY_UTILIZATION = 0.99

GIB = 1 << 30


class VllmSettingError(ValueError):
    """A setting that cannot be served; `field` names it, the message says why and what would
    be valid."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class ModelFacts:
    """What the fit check and the defaults need of a Hugging Face config.json."""

    architecture: str
    parameters: int
    layers: int
    attention_heads: int
    kv_heads: int
    head_dim: int
    max_position_embeddings: int
    config_dtype: str = "float32"  # its "dtype" / "torch_dtype"


@dataclass(frozen=True)
class VllmSettings:
    """One deployment shape's arguments: the GPU count is the tensor parallel size."""

    max_model_len: int
    dtype: str
    gpu_memory_utilization: float
    tensor_parallel_size: int


def settings_for(facts: ModelFacts, gpus: int, max_model_len: int | None = None,
                 dtype: str | None = None,
                 gpu_memory_utilization: float | None = None) -> VllmSettings:
    """The settings with Model Garden's defaults filled in, each checked; VllmSettingError
    naming the field otherwise."""
    if gpus < 1:
        raise VllmSettingError("vLLM serves on NVIDIA GPUs: choose a machine with at least one "
                               "(its GPU count is the tensor parallel size)", "accelerator_count")
    # vLLM splits attention by heads across the tensor parallel ranks.
    if facts.attention_heads % gpus:
        raise VllmSettingError(
            f"tensor parallel size {gpus} (the machine's GPUs) must divide the model's "
            f"{facts.attention_heads} attention heads (num_attention_heads): choose a machine "
            "with a GPU count that does", "accelerator_count")
    length = (min(DEFAULT_MAX_MODEL_LEN, facts.max_position_embeddings)
              if max_model_len is None else max_model_len)
    if not 1 <= length <= facts.max_position_embeddings:
        raise VllmSettingError(
            f"max_model_len {length} must be from 1 to the model's max_position_embeddings "
            f"({facts.max_position_embeddings})", "max_model_len")
    kind = DEFAULT_DTYPE if dtype in (None, "") else dtype
    if kind not in DTYPE_BYTES:
        raise VllmSettingError(f"dtype {kind!r} is not one of vLLM's: "
                               f"{', '.join(DTYPE_BYTES)}", "dtype")
    share = (DEFAULT_GPU_MEMORY_UTILIZATION if gpu_memory_utilization is None
             else gpu_memory_utilization)
    if not MIN_GPU_MEMORY_UTILIZATION <= share <= MAX_GPU_MEMORY_UTILIZATION:
        raise VllmSettingError(
            f"gpu_memory_utilization {share} must be from {MIN_GPU_MEMORY_UTILIZATION} to "
            f"{MAX_GPU_MEMORY_UTILIZATION} (the share of each GPU's memory vLLM takes)",
            "gpu_memory_utilization")
    return VllmSettings(length, kind, share, gpus)


def container_args(model_uri: str, settings: VllmSettings) -> list[str]:
    """The container's args, in the notebook's order (the entrypoint first: no command)."""
    return [*ENTRYPOINT, "--host=0.0.0.0", f"--port={PORT}", f"--model={model_uri}",
            f"--tensor-parallel-size={settings.tensor_parallel_size}",
            f"--swap-space={SWAP_SPACE_GB}", f"--max-model-len={settings.max_model_len}",
            f"--dtype={settings.dtype}", f"--max-loras={MAX_LORAS}",
            f"--max-cpu-loras={MAX_CPU_LORAS}", f"--max-num-seqs={MAX_NUM_SEQS}",
            "--disable-log-stats",
            f"--gpu-memory-utilization={settings.gpu_memory_utilization:g}"]


def container_env(model_uri: str) -> dict[str, str]:
    return {"MODEL_ID": model_uri}


def is_vllm_argv(argv: list[str]) -> bool:
    """Whether a container's command + args run vLLM's entrypoint (api_server, or its OpenAI
    server)."""
    return (len(argv) >= 3 and argv[0].startswith("python") and argv[1] == "-m"
            and argv[2].startswith("vllm.entrypoints."))


def value_bytes(facts: ModelFacts, dtype: str) -> int:
    """Bytes of one weight (and one KV cache value) as vLLM serves them at `dtype`."""
    return DTYPE_BYTES[dtype] or CONFIG_DTYPE_BYTES.get(facts.config_dtype, 2)


@dataclass(frozen=True)
class Fit:
    weights_bytes: int
    kv_cache_bytes: int
    available_bytes: int
    gpu_memory_bytes: int  # one GPU's

    @property
    def needed_bytes(self) -> int:
        return self.weights_bytes + self.kv_cache_bytes

    @property
    def fits(self) -> bool:
        return self.needed_bytes <= self.available_bytes

    def text(self, facts: ModelFacts, settings: VllmSettings, accelerator: str) -> str:
        """'weights 16.06 GiB (8.03B parameters at 2 bytes) + KV cache 0.50 GiB (...) = ...'."""
        per_token = 2 * facts.layers * facts.kv_heads * facts.head_dim
        unit = self.weights_bytes // max(facts.parameters, 1)
        return (f"weights {_gib(self.weights_bytes)} ({facts.parameters:,} parameters at "
                f"{unit} bytes, dtype {settings.dtype}) + KV cache {_gib(self.kv_cache_bytes)} "
                f"({settings.max_model_len} tokens x {facts.layers} layers x 2 x "
                f"{facts.kv_heads} kv heads x {facts.head_dim} head dim x {unit} bytes, "
                f"{per_token * unit:,} bytes a token) = {_gib(self.needed_bytes)} "
                f"{'<=' if self.fits else '>'} {_gib(self.available_bytes)} available "
                f"({settings.tensor_parallel_size} x {accelerator} of "
                f"{_gib(self.gpu_memory_bytes)} x gpu_memory_utilization "
                f"{settings.gpu_memory_utilization:g})")


def fit(facts: ModelFacts, settings: VllmSettings, gpu_memory_bytes: int) -> Fit:
    unit = value_bytes(facts, settings.dtype)
    weights = facts.parameters * unit
    kv = settings.max_model_len * facts.layers * 2 * facts.kv_heads * facts.head_dim * unit
    available = int(gpu_memory_bytes * settings.gpu_memory_utilization
                    * settings.tensor_parallel_size)
    return Fit(weights, kv, available, gpu_memory_bytes)


def gpu_memory_bytes(memory_gb: float) -> int:
    """One GPU's memory from the catalogue's GB (the spec sheet's decimal GB: an L4's 24 GB is
    22.4 GiB, close to the 22.5 GiB the driver reports it has)."""
    return int(memory_gb * 1_000_000_000)


def _gib(value: int) -> str:
    return f"{value / GIB:.2f} GiB"
