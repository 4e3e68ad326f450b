"""The Hugging Face decoder architectures the product trains and serves, shared by the trainers
(trainers/torch/models/hf_config.py builds them) and the control plane's registry
(vertexplan/hf_export.py checks a folder before it is registered), so a model one side takes
is never one the other refuses.

Keys are config.json's ``architectures`` entry, values its ``model_type``.
"""

from __future__ import annotations

DECODERS = {
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "mistral",
    "Qwen2ForCausalLM": "qwen2",
    "Qwen3ForCausalLM": "qwen3",
    "GemmaForCausalLM": "gemma",
}
# What every one of their config.json files must name (transformers has no default for them).
REQUIRED_KEYS = ("architectures", "hidden_size", "intermediate_size", "num_hidden_layers",
                 "num_attention_heads", "vocab_size")
