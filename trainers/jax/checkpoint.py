"""Orbax checkpoints in the PyTorch trainer's layout, under its commit protocol
(trainers/checkpoint.py: a temporary folder, the COMMITTED marker written last, keep the last K):

    step-00000050/
        COMMITTED      JSON metadata, written last: step, bytes, format "orbax", the mesh...
        trainer.json   step, loss, model shape, data position (the next step), corpus digest
        config.json    the run's configuration
        state/         Orbax: parameters and optimizer state, every host writing its shards

Orbax stores each array whole in its logical shape (tensorstore chunks), not per device, so a
checkpoint restores onto any mesh: the target's shardings say how to lay it out again.

Local paths (and the /gcs/ FUSE mount) and gs:// are written by Orbax directly, from every host.
Other fsspec URLs (memory:// in experiments) are staged in a local folder and copied with the
storage abstraction, on one host only.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import replace
from typing import Any

import jax
import orbax.checkpoint as ocp

from trainers.checkpoint import (
    TMP_PREFIX,
    CheckpointInfo,
    begin,
    commit,
    latest,
    prune,
    remove_incomplete,
    step_folder_name,
)
from trainers.storage import Storage, storage_for

FORMAT = "orbax"
STATE_DIR = "state"
TRAINER_FILE = "trainer.json"
CONFIG_FILE = "config.json"


def orbax_writes_directly(url: str, storage: Storage) -> bool:
    return storage.local or url.startswith("gs://")


def sync(name: str) -> None:
    """Every host reaches this point before any goes on (a no-op on one host)."""
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices(name)


class JaxCheckpoints:
    """The checkpoints of one run. Every host calls every method; host 0 owns the folders."""

    def __init__(self, root: str, keep: int, token: str) -> None:
        self.root = root if "://" in root else os.path.abspath(root)
        self.keep = keep
        self.token = token  # names temporary folders alike on every host
        self.storage = storage_for(self.root)
        self.is_main = jax.process_index() == 0
        if jax.process_count() > 1 and not orbax_writes_directly(self.root, self.storage):
            raise ValueError(f"checkpoint directory {root}: a multi-host run needs a path every "
                             "host shares (gs:// or /gcs/...)")

    def prepare(self) -> tuple[CheckpointInfo | None, list[str]]:
        """Remove what killed writes left, then find the newest complete checkpoint."""
        removed = remove_incomplete(self.storage, self.root) if self.is_main else []
        sync("checkpoints-prepared")
        return latest(self.storage, self.root), removed

    def save(
        self,
        step: int,
        state: Any,
        trainer_state: dict[str, Any],
        config: dict[str, Any],
        metadata: dict[str, Any],
    ) -> CheckpointInfo:
        if self.is_main:
            folder = begin(self.storage, self.root, step, token=self.token)
        else:
            folder = self._temporary_folder(step)
        sync(f"checkpoint-{step}-begun")
        write_state(self.storage, self.storage.join(folder, STATE_DIR), state)
        info = CheckpointInfo(step, self.storage.join(self.root, step_folder_name(step)), {})
        if self.is_main:
            for name, content in ((TRAINER_FILE, trainer_state), (CONFIG_FILE, config)):
                self.storage.write_bytes(
                    self.storage.join(folder, name), json.dumps(content, indent=1).encode()
                )
            info = commit(self.storage, self.root, step, folder, metadata)
            info = replace(info, pruned=tuple(prune(self.storage, self.root, self.keep)))
        sync(f"checkpoint-{step}-committed")
        return info

    def _temporary_folder(self, step: int) -> str:
        # The name host 0's `begin` chose: the same token on every host.
        if not self.storage.atomic_rename:
            return self.storage.join(self.root, step_folder_name(step))
        return self.storage.join(self.root, f"{TMP_PREFIX}{step:08d}-{self.token}")


def write_state(storage: Storage, path: str, state: Any) -> None:
    checkpointer = ocp.StandardCheckpointer()
    try:
        if orbax_writes_directly(path, storage):
            checkpointer.save(path, state)
            checkpointer.wait_until_finished()
            return
        with tempfile.TemporaryDirectory(prefix="orbax-stage-") as stage:
            local = os.path.join(stage, STATE_DIR)
            checkpointer.save(local, state)
            checkpointer.wait_until_finished()
            storage.put_tree(local, path)
    finally:
        checkpointer.close()


def read_state(path: str, target: Any) -> Any:
    """The state saved under the step folder `path`, laid out as `target` (abstract arrays
    with the shardings of this run's mesh) says."""
    storage = storage_for(path)
    state_path = storage.join(path, STATE_DIR)
    checkpointer = ocp.StandardCheckpointer()
    try:
        if orbax_writes_directly(path, storage):
            return checkpointer.restore(state_path, target)
        with tempfile.TemporaryDirectory(prefix="orbax-stage-") as stage:
            storage.get_tree(state_path, stage)
            return checkpointer.restore(stage, target)
    finally:
        checkpointer.close()


def read_json(path: str, name: str) -> dict[str, Any]:
    storage = storage_for(path)
    return json.loads(storage.read_bytes(storage.join(path, name)))
