"""The byte-level corpus and batches that are a pure function of (seed, step), in numpy alone.

Every trainer reads its text here and draws the same batches from it (the PyTorch trainer makes
tensors of them in trainers/torch/data.py), so a TPU image needs no torch.

The demo corpus is the Python standard library's own `.py` sources: it ships with every Python,
so nothing is downloaded. Tokens are the bytes 0..255.

Batches: the GLOBAL batch of step s is drawn from `seed` and `s` alone, and rank r of W takes
rows [r*B/W, (r+1)*B/W). So a run at world size 2 trains on exactly the data of a single-process
run with the same global batch, and a resumed run continues the data without any loader state.
"""

from __future__ import annotations

import hashlib
import os
import sysconfig
from dataclasses import dataclass

import numpy as np

from trainers.storage import storage_for

# Streams keep training and evaluation draws independent of each other.
TRAIN_STREAM = 0
EVAL_STREAM = 1
VAL_FRACTION = 0.1
SKIPPED_DIRS = {"site-packages", "dist-packages", "__pycache__"}  # vary between installs


@dataclass(frozen=True)
class Corpus:
    """The corpus as token arrays (uint8 bytes, or int32 ids of a tokenizer: trainers/torch/
    models/tokens.py), split into training and held-out text."""

    train: np.ndarray
    val: np.ndarray
    source: str
    sha256: str

    def describe(self) -> dict:
        return {
            "source": self.source,
            "sha256": self.sha256,
            "train_tokens": len(self.train),
            "val_tokens": len(self.val),
        }


def stdlib_source_files() -> list[str]:
    """The standard library's `.py` files, as sorted paths relative to its root."""
    root = sysconfig.get_paths()["stdlib"]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS]
        rel = os.path.relpath(folder, root)
        for name in files:
            if name.endswith(".py"):
                found.append(name if rel == "." else f"{rel.replace(os.sep, '/')}/{name}")
    return sorted(found)


def stdlib_text(max_bytes: int) -> bytes:
    """The first `max_bytes` of the standard library sources, concatenated in sorted order."""
    root = sysconfig.get_paths()["stdlib"]
    parts: list[bytes] = []
    size = 0
    for rel in stdlib_source_files():
        with open(os.path.join(root, rel), "rb") as f:
            chunk = f.read(max_bytes - size)
        parts.append(chunk)
        size += len(chunk)
        if size >= max_bytes:
            break
    return b"".join(parts)


def load_corpus(data: str | None, max_bytes: int, block_size: int) -> Corpus:
    """Read the corpus and split off the last 10% (at least two contexts) for evaluation."""
    if data:
        raw = storage_for(data).read_bytes(data)[:max_bytes]
        source = data
    else:
        raw = stdlib_text(max_bytes)
        source = f"python-stdlib:{sysconfig.get_python_version()}"
    tokens = np.frombuffer(raw, dtype=np.uint8).copy()
    n_val = max(int(len(tokens) * VAL_FRACTION), 2 * (block_size + 1))
    if len(tokens) - n_val < 2 * (block_size + 1):
        raise ValueError(
            f"corpus {source} has {len(tokens)} bytes: too small for block_size {block_size}"
        )
    return Corpus(
        train=tokens[:-n_val],
        val=tokens[-n_val:],
        source=source,
        sha256=hashlib.sha256(raw).hexdigest(),
    )


def batch_offsets(
    seed: int,
    step: int,
    batch_size: int,
    block_size: int,
    n_tokens: int,
    stream: int = TRAIN_STREAM,
) -> np.ndarray:
    """Start offsets of the GLOBAL batch for `step`: depends on nothing but the arguments."""
    rng = np.random.default_rng([seed, stream, step])
    return rng.integers(0, n_tokens - block_size, size=batch_size, dtype=np.int64)


def rank_rows(batch_size: int, rank: int, world_size: int) -> slice:
    """Rank `rank`'s contiguous share of a global batch."""
    per_rank = batch_size // world_size
    return slice(rank * per_rank, (rank + 1) * per_rank)


def global_batch(
    tokens: np.ndarray,
    seed: int,
    step: int,
    batch_size: int,
    block_size: int,
    stream: int = TRAIN_STREAM,
) -> tuple[np.ndarray, np.ndarray]:
    """The whole batch of `step`: inputs and next-byte targets, int32 (batch, block_size)."""
    offsets = batch_offsets(seed, step, batch_size, block_size, len(tokens), stream)
    rows = windows(tokens, offsets, block_size).astype(np.int32)
    return rows[:, :-1], rows[:, 1:]


def windows(tokens: np.ndarray, offsets: np.ndarray, block_size: int) -> np.ndarray:
    """One row of block_size + 1 tokens from each offset: a context and its next byte."""
    return tokens[offsets[:, None] + np.arange(block_size + 1)]
