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

`CheckpointManager` adds the distributed part: rank 0 decides which checkpoint to resume from
and broadcasts it, every rank gets the folder to write into (sharded strategies write on every
rank), and all ranks agree on success before rank 0 commits. `begin` and `finish` are the two
collective halves of `save`, so a write can go on in the background in between.
"""

from __future__ import annotations

import datetime
import json
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
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


WriteFn = Callable[[Storage, str], None]


def skip_zip_crc32() -> None:
    """Make torch.save skip the CRC32 of its zip records, for this process.

    Computing it runs at 1-2 GB/s on one core, about as slow as the disk, and torch.load never
    checks it (a flipped byte loads silently either way). Completeness is the COMMITTED
    marker's job; Cloud Storage checks uploads with its own crc32c.
    """
    from torch.utils.serialization import config

    config.save.compute_crc32 = False


def describe_failure(rank: int, exc: BaseException) -> str:
    return f"rank {rank}: {type(exc).__name__}: {exc}"


class CheckpointManager:
    """Checkpoints of one run, coordinated across ranks. Every rank calls every method."""

    def __init__(self, root: str, keep: int, rank: int, world_size: int) -> None:
        self.root = root
        self.keep = keep
        self.rank = rank
        self.world_size = world_size
        self.storage = storage_for(root)

    def prepare(self) -> tuple[CheckpointInfo | None, list[str]]:
        """Clean leftovers and find the checkpoint to resume from (rank 0 decides for all).
        Returns it and the removed leftovers (rank 0's list; [] elsewhere)."""
        outcome: tuple[CheckpointInfo | None, list[str]] | BaseException = (None, [])
        if self.rank == 0:
            try:
                removed = remove_incomplete(self.storage, self.root)
                outcome = (latest(self.storage, self.root), removed)
            except Exception as exc:
                outcome = exc
        outcome = self._broadcast(outcome)
        if isinstance(outcome, BaseException):
            raise RuntimeError(f"checkpoint directory {self.root}: {outcome}") from outcome
        found, removed = outcome
        return found, removed if self.rank == 0 else []

    def save(self, step: int, write: WriteFn, metadata: dict[str, Any]) -> CheckpointInfo:
        """`write(storage, folder)` runs on every rank; rank 0 commits once all succeeded."""
        folder = self.begin(step)
        try:
            write(self.storage, folder)
        except Exception as exc:
            return self.finish(step, folder, describe_failure(self.rank, exc), metadata)
        return self.finish(step, folder, None, metadata)

    def begin(self, step: int) -> str:
        """The folder every rank writes the checkpoint of `step` into (rank 0 creates it)."""
        folder: str | BaseException = ""
        if self.rank == 0:
            try:
                folder = begin(self.storage, self.root, step)
            except Exception as exc:
                folder = exc
        folder = self._broadcast(folder)
        if isinstance(folder, BaseException):
            raise RuntimeError(f"cannot create a checkpoint folder in {self.root}") from folder
        return folder

    def finish(
        self, step: int, folder: str, failure: str | None, metadata: dict[str, Any]
    ) -> CheckpointInfo:
        """Once every rank has written (or failed: `failure` says how), rank 0 commits the
        folder, or removes it if any rank failed. Every rank calls this."""
        failures = [f for f in self._gather(failure) if f]
        if failures:
            if self.rank == 0:
                self.storage.remove_tree(folder)  # never committed: nothing will read it
            raise RuntimeError("checkpoint write failed: " + "; ".join(failures))
        result: CheckpointInfo | BaseException | None = None
        if self.rank == 0:
            try:
                result = commit(self.storage, self.root, step, folder, metadata)
                pruned = prune(self.storage, self.root, self.keep)
                result = replace(result, pruned=tuple(pruned))
            except Exception as exc:
                result = exc
        result = self._broadcast(result)
        if isinstance(result, BaseException):
            raise RuntimeError("checkpoint commit failed") from result
        assert result is not None
        return result

    def _broadcast(self, value: Any) -> Any:
        # Imported here: the folder protocol above serves the JAX trainer too, without torch.
        import torch.distributed as dist

        if self.world_size == 1 or not dist.is_initialized():
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def _gather(self, value: Any) -> list[Any]:
        import torch.distributed as dist

        if self.world_size == 1 or not dist.is_initialized():
            return [value]
        out: list[Any] = [None] * self.world_size
        dist.all_gather_object(out, value)
        return out
