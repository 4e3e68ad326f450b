"""Tiny Hugging Face models, a tokenizer and the runs the Hugging Face model tests share.

The models are made by transformers itself (random weights, `save_pretrained`), the tokenizer
is a byte-level BPE trained with `tokenizers` on a few of the standard library's files: no hub
access. Runs go through tests/trainers/strategy_group.py, several per group of processes.
"""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

import torch

from tests.trainers.conftest import Group
from tests.trainers.replicas import finish_all, start_world

VOCAB = 384
BLOCK = 32
# The trainer's view of the runs: a small corpus (tokenized on every rank), no evaluation.
RUN_ARGS = [
    "--seed", "7", "--batch-size", "4", "--eval-every", "0",
    "--set", f"model.block_size={BLOCK}", "--set", "corpus_max_bytes=64000",
]
SHAPE = {
    "vocab_size": VOCAB, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "max_position_embeddings": 64,
}
# name: (config class, extra config values). Qwen3 and Gemma tie their embedding and head.
ARCHITECTURES = {
    "llama": ("LlamaConfig", {}),
    "mistral": ("MistralConfig", {"sliding_window": 64}),
    "qwen2": ("Qwen2Config", {"tie_word_embeddings": False}),
    "qwen3": ("Qwen3Config", {"head_dim": 8, "tie_word_embeddings": True}),
    "gemma": ("GemmaConfig", {"head_dim": 8}),
}
TOKENIZER_SOURCES = ("json/encoder.py", "json/decoder.py", "textwrap.py", "shlex.py")


def make_model(folder: Path, name: str, seed: int, **save: object) -> Path:
    """A transformers model of architecture `name` with random weights, saved to `folder`."""
    import transformers

    config_class, extra = ARCHITECTURES[name]
    config = getattr(transformers, config_class)(**SHAPE, **extra)
    config.architectures = [config_class.replace("Config", "ForCausalLM")]
    torch.manual_seed(seed)
    model = transformers.AutoModelForCausalLM.from_config(config)
    with torch.no_grad():  # norms start at one (zero for Gemma): give them values to carry
        for param_name, param in model.named_parameters():
            if "norm" in param_name:
                param.add_(torch.rand_like(param) * 0.1)
    model.save_pretrained(folder, **save)
    return folder


def make_tokenizer(path: Path, vocab_size: int = VOCAB) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    root = Path(sysconfig.get_paths()["stdlib"])
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False)
    tokenizer.train([str(root / f) for f in TOKENIZER_SOURCES], trainer)
    tokenizer.save(str(path))
    return path


def run_group(base: Path, runs: list[dict], world_size: int) -> Group:
    """`runs` ({"name", "args"}) one after another in one group of `world_size` processes."""
    base.mkdir(parents=True, exist_ok=True)
    spec = base / f"spec-{world_size}.json"
    spec.write_text(json.dumps({"runs": runs}))
    replicas = start_world([str(spec)], world_size, module="tests.trainers.strategy_group")
    results = finish_all(replicas, timeout=240)
    for result in results:
        assert result.returncode == 0, result.stderr[-5000:]
    return Group(results[0], base)


def first_batch(tokenizer: Path) -> torch.Tensor:
    """The rows (inputs and the next token) of the global batch of step 1 of a run with
    RUN_ARGS, drawn as the trainer draws it."""
    from trainers.corpus import batch_offsets, load_corpus, windows
    from trainers.torch.models.tokens import tokenized

    corpus = tokenized(load_corpus(None, 64_000, BLOCK), str(tokenizer), BLOCK)
    offsets = batch_offsets(7, 1, 4, BLOCK, len(corpus.train))
    return torch.from_numpy(windows(corpus.train, offsets, BLOCK).astype("int64"))


def transformers_loss(folder: Path, rows: torch.Tensor) -> float:
    """transformers' own loss of its model on the rows (it shifts the labels itself)."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    with torch.no_grad():
        return model(input_ids=rows, labels=rows).loss.item()
