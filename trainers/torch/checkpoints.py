"""The PyTorch trainer's checkpoints across ranks, on the step-folder protocol of
trainers/checkpoint.py.

`CheckpointManager` adds the distributed part: rank 0 decides which checkpoint to resume from
and broadcasts it, every rank gets the folder to write into (sharded strategies write on every
rank), and all ranks agree on success before rank 0 commits. `begin` and `finish` are the two
collective halves of `save`, so a write can go on in the background in between.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import torch.distributed as dist

from trainers.checkpoint import CheckpointInfo, begin, commit, latest, prune, remove_incomplete
from trainers.storage import Storage, storage_for

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
        if self.world_size == 1 or not dist.is_initialized():
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def _gather(self, value: Any) -> list[Any]:
        if self.world_size == 1 or not dist.is_initialized():
            return [value]
        out: list[Any] = [None] * self.world_size
        dist.all_gather_object(out, value)
        return out
