"""The commit protocol: a checkpoint counts only once its marker exists."""

from __future__ import annotations

import json

import pytest

from trainers import checkpoint
from trainers.checkpoint import MARKER
from trainers.storage import LocalStorage
from trainers.torch.checkpoints import CheckpointManager

pytestmark = pytest.mark.trainers


def save(storage, root, step, payload=b"weights"):
    folder = checkpoint.begin(storage, str(root), step)
    storage.write_bytes(storage.join(folder, "model.pt"), payload)
    return folder, checkpoint.commit(storage, str(root), step, folder, {"world_size": 2})


def test_nothing_counts_before_the_marker(tmp_path):
    storage = LocalStorage()
    folder = checkpoint.begin(storage, str(tmp_path), 50)
    storage.write_bytes(storage.join(folder, "model.pt"), b"x" * 100)
    assert folder.rsplit("/", 1)[1].startswith(".tmp-step-00000050-")
    assert checkpoint.latest(storage, str(tmp_path)) is None
    info = checkpoint.commit(storage, str(tmp_path), 50, folder, {"world_size": 2})
    assert info.path == str(tmp_path / "step-00000050")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-00000050"]
    marker = json.loads((tmp_path / "step-00000050" / MARKER).read_text())
    assert marker["step"] == 50 and marker["world_size"] == 2 and marker["bytes"] == 100
    assert "created" in marker
    assert checkpoint.latest(storage, str(tmp_path)).step == 50


def test_incomplete_checkpoints_are_ignored_then_removed(tmp_path):
    storage = LocalStorage()
    save(storage, tmp_path, 10)
    # A process killed -9 while saving leaves a temporary folder, or (on storage without
    # atomic renames) a step folder without its marker, or a marker cut short.
    checkpoint.begin(storage, str(tmp_path), 20)
    (tmp_path / "step-00000030").mkdir()
    (tmp_path / "step-00000030" / "model.pt").write_bytes(b"half")
    (tmp_path / "step-00000040").mkdir()
    (tmp_path / "step-00000040" / MARKER).write_text('{"step": 4')
    assert checkpoint.latest(storage, str(tmp_path)).step == 10
    removed = checkpoint.remove_incomplete(storage, str(tmp_path))
    assert len(removed) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["step-00000010"]


def test_keep_last_k(tmp_path):
    storage = LocalStorage()
    for step in (5, 10, 15, 20):
        save(storage, tmp_path, step)
    removed = checkpoint.prune(storage, str(tmp_path), keep=2)
    assert [r.rsplit("/", 1)[1] for r in removed] == ["step-00000005", "step-00000010"]
    assert [c.step for c in checkpoint.committed(storage, str(tmp_path))] == [15, 20]
    assert checkpoint.prune(storage, str(tmp_path), keep=0) == []


def test_storage_without_atomic_rename_commits_by_the_marker(tmp_path):
    storage = LocalStorage(atomic_rename=False)  # as an object store behaves
    folder = checkpoint.begin(storage, str(tmp_path), 7)
    assert folder == str(tmp_path / "step-00000007")
    storage.write_bytes(storage.join(folder, "model.pt"), b"w")
    assert checkpoint.latest(storage, str(tmp_path)) is None  # no marker yet
    checkpoint.commit(storage, str(tmp_path), 7, folder, {})
    assert checkpoint.latest(storage, str(tmp_path)).step == 7


def test_manager_saves_and_finds_on_one_rank(tmp_path):
    root = str(tmp_path / "ckpt")
    manager = CheckpointManager(root, keep=1, rank=0, world_size=1)
    assert manager.prepare() == (None, [])
    for step in (1, 2):
        info = manager.save(step, lambda s, f: s.write_bytes(s.join(f, "a.bin"), b"abc"), {})
        assert info.metadata["bytes"] == 3
    found, removed = manager.prepare()
    assert found.step == 2 and removed == []
    assert [c.step for c in checkpoint.committed(manager.storage, root)] == [2]


def test_manager_reports_a_failed_write_and_commits_nothing(tmp_path):
    manager = CheckpointManager(str(tmp_path), keep=0, rank=0, world_size=1)

    def broken(storage, folder):
        raise OSError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        manager.save(3, broken, {})
    assert list(tmp_path.iterdir()) == []
