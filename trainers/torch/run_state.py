"""What a checkpoint holds besides the model and optimizer: the step, the data position and the
random number generators of every rank.

The corpus's batches are a pure function of (seed, step), so their position is the next step;
streamed data (trainers/stream/) has a position per rank, under "stream". Rank 0 writes
`trainer.pt` (its own RNG and stream position inside); every other rank writes
`rng-rank-N.pt` with its own (once its RNG alone). A rank without a file of its own (a resumed
run with more ranks) takes rank 0's.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import torch

from trainers.storage import Storage

TRAINER_STATE_FILE = "trainer.pt"
# What each rank has of its own, in its own file.
RANK_KEYS = ("rng", "stream")


def rng_file(rank: int) -> str:
    return f"rng-rank-{rank:05d}.pt"


def write(storage: Storage, folder: str, rank: int, state: dict[str, Any]) -> None:
    """Rank 0 writes the whole trainer state, other ranks their RNG and stream position."""
    if rank == 0:
        name, obj = TRAINER_STATE_FILE, state
    else:
        name, obj = rng_file(rank), {key: state.get(key) for key in RANK_KEYS}
    with storage.open_write(storage.join(folder, name)) as f:
        torch.save(obj, f)


def read(storage: Storage, folder: str, rank: int) -> dict[str, Any]:
    """The trainer state, with this rank's RNG under "rng" and stream position under
    "stream"."""
    state = _load(storage, storage.join(folder, TRAINER_STATE_FILE))
    own = storage.join(folder, rng_file(rank))
    if rank != 0 and storage.exists(own):
        loaded = _load(storage, own)
        # Checkpoints written before streamed data hold the RNG alone.
        state.update(loaded if "rng" in loaded else {"rng": loaded, "stream": None})
    return state


def capture_rng(device: str) -> dict[str, Any]:
    name, key, pos, has_gauss, cached = np.random.get_state()
    return {
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state(device) if device.startswith("cuda") else None,
        "python": random.getstate(),
        # As a tensor: checkpoints load with weights_only=True, which refuses numpy arrays.
        "numpy": {
            "name": name,
            "key": torch.from_numpy(key.astype(np.int64)),
            "pos": pos,
            "has_gauss": has_gauss,
            "cached_gaussian": cached,
        },
    }


def restore_rng(state: dict[str, Any], device: str) -> None:
    torch.set_rng_state(state["torch"])
    if state["cuda"] is not None and device.startswith("cuda"):
        torch.cuda.set_rng_state(state["cuda"], device)
    random.setstate(state["python"])
    n = state["numpy"]
    np.random.set_state(
        (
            n["name"],
            n["key"].numpy().astype(np.uint32),
            n["pos"],
            n["has_gauss"],
            n["cached_gaussian"],
        )
    )


def _load(storage: Storage, path: str) -> dict[str, Any]:
    with storage.open_read(path) as f:
        return torch.load(f, map_location="cpu", weights_only=True)
