"""Byte-level text data and batches that are a pure function of (seed, step).

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
import torch

from trainers.storage import storage_for

# Streams keep training and evaluation draws independent of each other.
TRAIN_STREAM = 0
EVAL_STREAM = 1
VAL_FRACTION = 0.1
SKIPPED_DIRS = {"site-packages", "dist-packages", "__pycache__"}  # vary between installs


@dataclass(frozen=True)
class Corpus:
    train: torch.Tensor  # uint8 tokens
    val: torch.Tensor
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
    tokens = torch.from_numpy(np.frombuffer(raw, dtype=np.uint8).copy())
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


def make_batch(
    tokens: torch.Tensor, offsets: np.ndarray, block_size: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and next-byte targets, int64 tensors of shape (len(offsets), block_size)."""
    index = torch.from_numpy(offsets)[:, None] + torch.arange(block_size + 1)
    rows = tokens[index].long()
    return rows[:, :-1], rows[:, 1:]


def local_batch(
    tokens: torch.Tensor,
    seed: int,
    step: int,
    batch_size: int,
    block_size: int,
    rank: int,
    world_size: int,
    stream: int = TRAIN_STREAM,
) -> tuple[torch.Tensor, torch.Tensor]:
    """This rank's slice of the global batch of `step`."""
    offsets = batch_offsets(seed, step, batch_size, block_size, len(tokens), stream)
    return make_batch(tokens, offsets[rank_rows(batch_size, rank, world_size)], block_size)
