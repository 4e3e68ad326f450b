"""The vllm runtime's container spec against Model Garden's documented form, the fit check's
figures, and the checks of a Hugging Face model folder (vertexplan/serving_vllm.py,
vertexplan/hf_export.py)."""

from __future__ import annotations

import json
import re

import pytest

from vertexplan import hf_export, serving_vllm
from vertexplan.hf_export import ExportRefused
from vertexplan.serving_vllm import ModelFacts, VllmSettingError

# Llama-3-8B's published config.json (the keys these checks read).
LLAMA_3_8B = {
    "architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
    "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16",
}
LLAMA_3_70B = {**LLAMA_3_8B, "hidden_size": 8192, "intermediate_size": 28672,
               "num_hidden_layers": 80, "num_attention_heads": 64}
L4 = serving_vllm.gpu_memory_bytes(24)
H100 = serving_vllm.gpu_memory_bytes(80)


def facts(config: dict) -> ModelFacts:
    return hf_export.read_config(json.dumps(config).encode(), "gs://b/m")[0]


def test_the_spec_is_model_garden_s_documented_form() -> None:
    """The values of deploy_model_vllm() in vertex-ai-samples' model_garden_huggingface_vllm_
    deployment.ipynb (cc0d791): its vllm_args for 2 GPUs and its defaults, written out here as
    the notebook builds them, and its upload's image, port, routes and env."""
    model_id, accelerator_count = "gs://bucket/jobs/vision/llama", 2
    max_model_len, dtype, max_loras, max_cpu_loras, max_num_seqs = 4096, "auto", 1, 8, 256
    gpu_memory_utilization = 0.9
    documented = [
        "python", "-m", "vllm.entrypoints.api_server", "--host=0.0.0.0", "--port=8080",
        f"--model={model_id}", f"--tensor-parallel-size={accelerator_count}",
        "--swap-space=16", f"--max-model-len={max_model_len}", f"--dtype={dtype}",
        f"--max-loras={max_loras}", f"--max-cpu-loras={max_cpu_loras}",
        f"--max-num-seqs={max_num_seqs}", "--disable-log-stats",
        f"--gpu-memory-utilization={gpu_memory_utilization}",
    ]
    settings = serving_vllm.settings_for(facts(LLAMA_3_8B), accelerator_count)
    assert serving_vllm.container_args(model_id, settings) == documented
    assert serving_vllm.IMAGE_URI == ("us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-"
                                      "dockers/pytorch-vllm-serve:20251205_0916_RC01")
    assert (serving_vllm.PORT, serving_vllm.PREDICT_ROUTE, serving_vllm.HEALTH_ROUTE) == (
        8080, "/generate", "/ping")
    assert serving_vllm.container_env(model_id) == {"MODEL_ID": model_id}
    assert (serving_vllm.SHARED_MEMORY_MB, serving_vllm.DEPLOYMENT_TIMEOUT_S) == (16384, 7200)
    assert serving_vllm.is_vllm_argv(documented)
    assert not serving_vllm.is_vllm_argv(["python", "-m", "trainers.serve"])


def test_the_fit_check_adds_weights_and_the_kv_cache_and_shows_its_figures() -> None:
    small = facts(LLAMA_3_8B)
    assert small.parameters == 8_030_261_248  # Llama-3-8B's published count
    one_l4 = serving_vllm.settings_for(small, 1)
    found = serving_vllm.fit(small, one_l4, L4)
    assert found.weights_bytes == 8_030_261_248 * 2
    assert found.kv_cache_bytes == 4096 * 32 * 2 * 8 * 128 * 2  # 0.5 GiB
    assert found.available_bytes == int(24e9 * 0.9)
    assert found.fits
    # The whole context (8192) at float32 no longer fits one L4.
    wide = serving_vllm.settings_for(small, 1, max_model_len=8192, dtype="float32")
    assert not serving_vllm.fit(small, wide, L4).fits

    big = facts(LLAMA_3_70B)
    one = serving_vllm.settings_for(big, 1)
    refused = serving_vllm.fit(big, one, H100)
    assert not refused.fits
    text = refused.text(big, one, "NVIDIA_H100_80GB")
    assert text.startswith("weights 131.42 GiB (70,553,706,496 parameters at 2 bytes, dtype "
                           "auto) + KV cache 1.25 GiB (4096 tokens x 80 layers x 2 x 8 kv heads "
                           "x 128 head dim x 2 bytes, 327,680 bytes a token) = 132.67 GiB > "
                           "67.06 GiB available (1 x NVIDIA_H100_80GB of 74.51 GiB x "
                           "gpu_memory_utilization 0.9)"), text
    four = serving_vllm.settings_for(big, 4)
    assert serving_vllm.fit(big, four, H100).fits


@pytest.mark.parametrize(("kwargs", "field", "words"), [
    ({"max_model_len": 8193}, "max_model_len", "max_position_embeddings (8192)"),
    ({"max_model_len": 0}, "max_model_len", "from 1 to"),
    ({"dtype": "int4"}, "dtype", "not one of vLLM's"),
    ({"gpu_memory_utilization": 1.5}, "gpu_memory_utilization", "from 0.05 to 0.99"),
    ({"gpus": 3}, "accelerator_count", "32 attention heads"),
    ({"gpus": 0}, "accelerator_count", "NVIDIA GPUs"),
])
def test_bad_settings_name_their_field(kwargs: dict, field: str, words: str) -> None:
    gpus = kwargs.pop("gpus", 1)
    with pytest.raises(VllmSettingError) as refused:
        serving_vllm.settings_for(facts(LLAMA_3_8B), gpus, **kwargs)
    assert refused.value.field == field and words in str(refused.value)


def test_max_model_len_defaults_to_the_notebook_s_or_the_model_s_context() -> None:
    assert serving_vllm.settings_for(facts(LLAMA_3_8B), 1).max_model_len == 4096
    short = facts({**LLAMA_3_8B, "max_position_embeddings": 2048})
    assert serving_vllm.settings_for(short, 1).max_model_len == 2048


# transformers' own model.num_parameters() for these configs (measured 2026-11-29 with the
# venv's transformers; importing it here would cost the suite ~20 s). The stack test
# tests/integration/test_serving.py compares a registered export's count with transformers live.
TINY = {"hidden_size": 64, "intermediate_size": 96, "num_hidden_layers": 2,
        "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 300,
        "max_position_embeddings": 128}


@pytest.mark.parametrize(("architecture", "extra", "expected"), [
    ("LlamaForCausalLM", {}, 100_160),
    ("LlamaForCausalLM", {"attention_bias": True, "mlp_bias": True,
                          "tie_word_embeddings": True}, 81_856),
    ("MistralForCausalLM", {}, 100_160),
    ("Qwen2ForCausalLM", {}, 100_416),  # q/k/v biases
    ("Qwen3ForCausalLM", {"head_dim": 32}, 124_864),  # per-head q/k norms
    ("GemmaForCausalLM", {"num_key_value_heads": 1, "head_dim": 16}, 76_864),  # tied head
])
def test_parameter_counts_equal_transformers_own(architecture: str, extra: dict,
                                                 expected: int) -> None:
    config = {"architectures": [architecture], **TINY, **extra}
    assert hf_export.read_config(json.dumps(config).encode(), "f")[0].parameters == expected


@pytest.mark.parametrize(("config", "words"), [
    ({**LLAMA_3_8B, "architectures": ["GPT2LMHeadModel"]},
     "gs://b/m/config.json: key 'architectures' names 'GPT2LMHeadModel'"),
    ({k: v for k, v in LLAMA_3_8B.items() if k != "max_position_embeddings"},
     "gs://b/m/config.json: the required key 'max_position_embeddings' is missing"),
    ({**LLAMA_3_8B, "hidden_size": "4096"}, "key 'hidden_size' must be a positive integer"),
    ({**LLAMA_3_8B, "num_key_value_heads": 5}, "key 'num_key_value_heads' 5 must divide"),
])
def test_a_config_that_cannot_be_served_is_refused_naming_file_and_key(
        config: dict, words: str) -> None:
    with pytest.raises(ExportRefused, match=re.escape(words)):
        hf_export.read_config(json.dumps(config).encode(), "gs://b/m")
    with pytest.raises(ExportRefused, match=re.escape("gs://b/m/config.json: missing")):
        hf_export.read_config(None, "gs://b/m")


def test_weights_and_tokenizer_must_be_there() -> None:
    index = json.dumps({"weight_map": {"a": "model-00001-of-00002.safetensors",
                                       "b": "model-00002-of-00002.safetensors"}}).encode()
    present = {"model-00001-of-00002.safetensors", "tokenizer.json"}
    with pytest.raises(ExportRefused, match=re.escape(
            "gs://b/m/model.safetensors.index.json: key 'weight_map' lists shard "
            "'model-00002-of-00002.safetensors', which is missing")):
        hf_export.read_weights(index, present.__contains__, "gs://b/m")
    present.add("model-00002-of-00002.safetensors")
    assert len(hf_export.read_weights(index, present.__contains__, "gs://b/m")) == 2
    escape = json.dumps({"weight_map": {"a": "../x.safetensors"}}).encode()
    with pytest.raises(ExportRefused, match=re.escape("not a .safetensors file beside the index")):
        hf_export.read_weights(escape, lambda name: True, "gs://b/m")
    many = json.dumps({"weight_map": {f"t{i}": f"m-{i}.safetensors"
                                      for i in range(hf_export.MAX_SHARDS + 1)}}).encode()
    asked: list[str] = []
    with pytest.raises(ExportRefused, match="lists 1025 shard files, more than the 1024"):
        hf_export.read_weights(many, lambda name: asked.append(name) or True, "gs://b/m")
    assert asked == []  # refused before a single storage request
    with pytest.raises(ExportRefused, match=re.escape(
            "neither model.safetensors.index.json nor model.safetensors")):
        hf_export.read_weights(None, lambda name: False, "gs://b/m")
    assert hf_export.read_tokenizer(present.__contains__, "gs://b/m") == "tokenizer.json"
    with pytest.raises(ExportRefused, match="gs://b/m: no tokenizer"):
        hf_export.read_tokenizer(lambda name: False, "gs://b/m")
