"""Byte-level text data and batches that are a pure function of (seed, step).

The demo corpus is the Python standard library's own `.py` sources: it ships with every Python,
so nothing is downloaded. Tokens are the bytes 0..255.

Batches: the GLOBAL batch of step s is drawn from `seed` and `s` alone, and rank r of W takes
rows [r*B/W, (r+1)*B/W). So a run at world size 2 trains on exactly the data of a single-process
run with the same global batch, and a resumed run continues the data without any loader state.
Reading the text and drawing the positions is trainers/text.py's (shared with the JAX trainer);
this module makes torch tensors of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from trainers.text import (
    EVAL_STREAM,
    SKIPPED_DIRS,
    TRAIN_STREAM,
    VAL_FRACTION,
    batch_offsets,
    load_text,
    rank_rows,
    stdlib_source_files,
    stdlib_text,
)

__all__ = [
    "EVAL_STREAM",
    "SKIPPED_DIRS",
    "TRAIN_STREAM",
    "VAL_FRACTION",
    "Corpus",
    "batch_offsets",
    "load_corpus",
    "local_batch",
    "make_batch",
    "rank_rows",
    "stdlib_source_files",
    "stdlib_text",
]


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


def load_corpus(data: str | None, max_bytes: int, block_size: int) -> Corpus:
    """Read the corpus and split off the last 10% (at least two contexts) for evaluation."""
    text = load_text(data, max_bytes, block_size)
    return Corpus(
        train=torch.from_numpy(text.train),
        val=torch.from_numpy(text.val),
        source=text.source,
        sha256=text.sha256,
    )


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
