"""The model the product's trainer builds from its command line, as both sides read it.

`python -m trainers.train` (and the JAX and PyTorch/XLA trainers) trains a byte-level GPT of a
preset's shape (`--preset tiny` by default) with `--set model.<dim>=N` overriding a dimension,
unless `--model-config` names a Hugging Face shape or `--init-from` names weights to start from
(sized elsewhere, or not at all). The composer reads it so the memory plan and the estimate
never describe a model the job will not train; the emulator's machine-sized guard reads it to
refuse a job that cannot fit the machine. Neither imports the trainers (they run in the
replicas' environment): the preset shapes here are held to trainers/config.py by a test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# The shapes of trainers/config.py's presets (tests/contract/test_trainer_models.py holds them).
GPT_PRESETS: dict[str, dict[str, int]] = {
    "tiny": {"n_layer": 2, "n_embd": 64, "block_size": 64, "vocab_size": 256},
    "small": {"n_layer": 6, "n_embd": 384, "block_size": 256, "vocab_size": 256},
}
DEFAULT_PRESET = "tiny"
# Arguments that make the trainer build (or load) a model the presets do not describe.
OTHER_MODEL_FLAGS = ("--model-config", "--init-from")
_DIGITS = re.compile(r"[0-9]{1,9}")


@dataclass(frozen=True)
class PresetModel:
    preset: str
    dims: dict[str, int]
    parameters: int

    @property
    def description(self) -> str:
        return (f"a byte-level GPT ({self.dims['n_layer']} layers, width "
                f"{self.dims['n_embd']}; --preset {self.preset})")


def flags_and_sets(args: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The `--flag value` / `--flag=value` pairs (the last wins, as argparse's) and the
    `--set key=value` overrides."""
    flags: dict[str, str] = {}
    sets: dict[str, str] = {}
    i = 0
    while i < len(args):
        word = args[i]
        if isinstance(word, str) and word.startswith("--"):
            name, eq, value = word.partition("=")
            # A switch (--compile-blocks) takes no value: the next flag is its own.
            if not eq and i + 1 < len(args) and not str(args[i + 1]).startswith("--"):
                value, i = str(args[i + 1]), i + 1
            if name == "--set":
                key, _, setting = value.partition("=")
                sets[key.strip()] = setting.strip()
            else:
                flags[name] = value
        i += 1
    return flags, sets


def positive(value: Any) -> int | None:
    """A whole number of at least 1 from an argument or a config value, else None."""
    if isinstance(value, str):
        # ASCII digits only (str.isdigit takes "²", which int() refuses), and no absurd size.
        value = int(value) if _DIGITS.fullmatch(value.strip()) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else None


def gpt_parameters(n_layer: int, n_embd: int, vocab_size: int, block_size: int,
                   bias: bool = True) -> int:
    """The byte-level GPT's count (trainers/torch/model.py): 12 x layers x width^2 in the
    blocks' matrices, the token and position embeddings (the output layer shares the token
    embedding), the layer norms' weights, and with `bias` the norms' and linear layers' biases
    (9 x width a block in attention and the MLP)."""
    norms = (2 * n_layer + 1) * n_embd
    biases = (9 * n_layer * n_embd + norms) if bias else 0
    return 12 * n_layer * n_embd**2 + (vocab_size + block_size) * n_embd + norms + biases


def preset_model(flags: dict[str, str], sets: dict[str, str]) -> PresetModel | None:
    """The preset GPT the arguments build, or None when they build another model (a
    --model-config shape, --init-from weights) or name a preset not known here."""
    if any(flag in flags for flag in OTHER_MODEL_FLAGS):
        return None
    name = flags.get("--preset", DEFAULT_PRESET)
    shape = GPT_PRESETS.get(name)
    if shape is None:
        return None
    dims = {key: positive(sets.get(f"model.{key}")) or value for key, value in shape.items()}
    bias = sets.get("model.bias", "true").strip().lower() not in ("false", "0", "no")
    return PresetModel(name, dims, gpt_parameters(**dims, bias=bias))
