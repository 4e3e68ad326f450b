"""Checkpoints that survive being killed at any moment.

Layout under the checkpoint directory:

    step-00000050/            a complete checkpoint: its COMMITTED marker exists
        COMMITTED             JSON metadata (step, created, world_size, bytes, ...), written last
        trainer.pt config.json  step, data position, rank 0's RNG; rng-rank-N.pt for the others
        model.pt optimizer.pt   ddp/single (rank 0 writes the replicated state)
        dcp/                    fsdp: torch.distributed.checkpoint, a shard from every rank
        deepspeed/              zero1/2/3: engine.save_checkpoint from every rank
    .tmp-step-00000100-1a2b/  being written (or left by a process killed while writing)

Commit protocol: write everything under a temporary name, write the marker last, then rename
the folder into place (atomic on a local file system). Storage without atomic renames (object
stores) writes straight into `step-N/`; the marker, written last, is then the commit. Either
way a folder without a readable marker is never loaded, and rank 0 removes such leftovers at
start-up, before any new checkpoint is written.

Every trainer writes its checkpoints through this protocol, with what its processes need to
agree on around it: the PyTorch trainer's `CheckpointManager` (trainers/torch/checkpoints.py),
the JAX trainer's hosts (trainers/jax/checkpoint.py).
"""

from __future__ import annotations

import datetime
import json
import re
import uuid
from dataclasses import dataclass
from typing import Any

from trainers.storage import Storage, storage_for

MARKER = "COMMITTED"
TMP_PREFIX = ".tmp-step-"
_STEP_FOLDER = re.compile(r"^step-(\d{8})$")


@dataclass(frozen=True)
class CheckpointInfo:
    step: int
    path: str
    metadata: dict[str, Any]
    # Older checkpoints rotation removed when this one was committed (keep the last K).
    pruned: tuple[str, ...] = ()


class IncompleteCheckpoint(ValueError):
    """A checkpoint named to resume from cannot be: missing, or never committed."""


def step_folder_name(step: int) -> str:
    return f"step-{step:08d}"


def step_of_folder(path: str) -> int | None:
    match = _STEP_FOLDER.match(path.rstrip("/").rsplit("/", 1)[-1])
    return int(match.group(1)) if match else None


def named_checkpoint(path: str) -> CheckpointInfo:
    """The checkpoint at `path` (a step folder, local or gs://), which must be complete.

    Raises IncompleteCheckpoint saying why not: resuming from half a checkpoint would train
    from weights that were never saved whole."""
    storage = storage_for(path)
    path = path.rstrip("/")
    if not storage.exists(path):
        raise IncompleteCheckpoint(f"cannot resume from {path}: it does not exist (deleted by "
                                   "rotation, or never written)")
    metadata = read_marker(storage, path)
    if metadata is None:
        raise IncompleteCheckpoint(f"cannot resume from {path}: it is not a complete checkpoint "
                                   f"(no readable {MARKER} marker: its write never finished)")
    step = metadata.get("step", step_of_folder(path))
    if isinstance(step, bool) or not isinstance(step, int):
        raise IncompleteCheckpoint(f"cannot resume from {path}: its {MARKER} marker names no "
                                   "step")
    return CheckpointInfo(step, path, metadata)


def read_marker(storage: Storage, folder: str) -> dict[str, Any] | None:
    """The marker's metadata, or None when the folder is not a complete checkpoint."""
    path = storage.join(folder, MARKER)
    if not storage.exists(path):
        return None
    try:
        metadata = json.loads(storage.read_bytes(path))
    except (OSError, ValueError):
        return None  # a marker cut short is no marker
    return metadata if isinstance(metadata, dict) else None


def committed(storage: Storage, root: str) -> list[CheckpointInfo]:
    """Complete checkpoints, oldest first."""
    found = []
    for name in storage.list_dir(root):
        match = _STEP_FOLDER.match(name)
        if not match:
            continue
        folder = storage.join(root, name)
        metadata = read_marker(storage, folder)
        if metadata is not None:
            found.append(CheckpointInfo(int(match.group(1)), folder, metadata))
    return sorted(found, key=lambda c: c.step)


def latest(storage: Storage, root: str) -> CheckpointInfo | None:
    complete = committed(storage, root)
    return complete[-1] if complete else None


def remove_incomplete(storage: Storage, root: str) -> list[str]:
    """Delete temporary folders and step folders without a marker. Call only while nothing is
    being written (start-up, rank 0)."""
    removed = []
    for name in storage.list_dir(root):
        folder = storage.join(root, name)
        stale_tmp = name.startswith(TMP_PREFIX)
        unmarked = bool(_STEP_FOLDER.match(name)) and read_marker(storage, folder) is None
        if stale_tmp or unmarked:
            storage.remove_tree(folder)
            removed.append(folder)
    return removed


def prune(storage: Storage, root: str, keep: int) -> list[str]:
    """Keep the newest `keep` complete checkpoints (0 keeps all); returns the removed folders."""
    if keep <= 0:
        return []
    old = committed(storage, root)[:-keep]
    for info in old:
        storage.remove_tree(info.path)
    return [info.path for info in old]


def begin(storage: Storage, root: str, step: int, token: str | None = None) -> str:
    """Create and return the folder the checkpoint of `step` is written into. `token` names
    the temporary folder (a random one by default): processes that cannot exchange the name
    agree on a token instead."""
    storage.make_dirs(root)
    if storage.atomic_rename:
        folder = storage.join(root, f"{TMP_PREFIX}{step:08d}-{token or uuid.uuid4().hex[:8]}")
    else:
        folder = storage.join(root, step_folder_name(step))
        storage.remove_tree(folder)  # a partial write of the same step from an earlier attempt
    storage.make_dirs(folder)
    return folder


def commit(
    storage: Storage, root: str, step: int, folder: str, metadata: dict[str, Any]
) -> CheckpointInfo:
    """Write the marker (last), then move the folder into place."""
    size = storage.size(folder)
    full = {
        "step": step,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "bytes": size,
        **metadata,
    }
    storage.write_bytes(storage.join(folder, MARKER), json.dumps(full, indent=1).encode())
    final = storage.join(root, step_folder_name(step))
    if folder != final:
        if storage.exists(final):
            storage.remove_tree(final)  # the same step saved again (a rerun of a finished job)
        storage.rename(folder, final)
    return CheckpointInfo(step, final, full)
