"""The corpus's batches as torch tensors: this rank's slice of every global batch.

What the batches are (a pure function of seed and step, sliced by rank) is trainers/corpus.py's,
shared with the other trainers; this module only makes int64 tensors of them.
"""

from __future__ import annotations

import numpy as np
import torch

from trainers.corpus import TRAIN_STREAM, batch_offsets, rank_rows, windows


def make_batch(
    tokens: np.ndarray, offsets: np.ndarray, block_size: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and next-byte targets, int64 tensors of shape (len(offsets), block_size)."""
    rows = torch.from_numpy(windows(tokens, offsets, block_size).astype(np.int64))
    return rows[:, :-1], rows[:, 1:]


def local_batch(
    tokens: np.ndarray,
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
