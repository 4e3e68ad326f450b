"""gs:// checkpoints and exports through fsspec, tested on fsspec's memory file system (an
object store too: no folder rename, so the COMMITTED marker alone commits). In this process:
the memory file system is per process."""

from __future__ import annotations

import importlib.util
import io
import json
import uuid
from dataclasses import replace

import pytest
import torch

from trainers import checkpoint
from trainers.checkpoint import MARKER
from trainers.job.cluster import Process
from trainers.job.preemption import StopRequest
from trainers.storage import FsspecStorage, GcsClientStorage, StorageError, storage_for
from trainers.torch import distributed
from trainers.torch.checkpoints import CheckpointManager
from trainers.torch.config import preset
from trainers.torch.trainer import Trainer

pytestmark = pytest.mark.trainers

ONE = Process(0, 1, 0, 1, "127.0.0.1", 0, "single")


@pytest.fixture
def bucket() -> str:
    return f"memory://bucket-{uuid.uuid4().hex[:8]}"


def write(storage, folder):
    storage.write_bytes(storage.join(folder, "model.pt"), b"weights")


def test_save_commits_by_marker_and_keeps_the_last_k(bucket):
    root = f"{bucket}/ckpt"
    manager = CheckpointManager(root, keep=2, rank=0, world_size=1)
    assert isinstance(manager.storage, FsspecStorage) and not manager.storage.atomic_rename
    assert manager.prepare() == (None, [])
    for step in (5, 10, 15):
        info = manager.save(step, write, {"world_size": 1})
        assert info.path == f"{root}/step-{step:08d}"
        assert info.metadata["bytes"] == len(b"weights")
    storage = manager.storage
    assert storage.list_dir(root) == ["step-00000010", "step-00000015"]
    marker = json.loads(storage.read_bytes(f"{root}/step-00000015/{MARKER}"))
    assert marker["step"] == 15 and marker["world_size"] == 1

    # Written in place, so a killed writer leaves a step folder without its marker.
    folder = checkpoint.begin(storage, root, 20)
    assert folder == f"{root}/step-00000020"
    write(storage, folder)
    found, removed = manager.prepare()
    assert found.step == 15 and found.path == f"{root}/step-00000015"
    assert removed == [f"{root}/step-00000020"]
    assert storage.list_dir(root) == ["step-00000010", "step-00000015"]


def test_a_failed_write_commits_nothing(bucket):
    manager = CheckpointManager(f"{bucket}/ckpt", keep=0, rank=0, world_size=1)

    def broken(storage, folder):
        write(storage, folder)
        raise OSError("quota exceeded")

    with pytest.raises(RuntimeError, match="quota exceeded"):
        manager.save(3, broken, {})
    assert manager.storage.list_dir(f"{bucket}/ckpt") == []


def test_folders_copy_to_and_from_local_disks(bucket, tmp_path):
    """What a DeepSpeed rank does: save locally, upload; download, load locally."""
    source = tmp_path / "out"
    (source / "deepspeed").mkdir(parents=True)
    (source / "latest").write_text("deepspeed")
    (source / "deepspeed" / "shard-0.pt").write_bytes(b"0" * 10)
    storage = storage_for(bucket)
    storage.put_tree(str(source), f"{bucket}/step")
    assert storage.size(f"{bucket}/step") == 19
    back = tmp_path / "back"
    storage.get_tree(f"{bucket}/step", str(back))
    assert (back / "latest").read_text() == "deepspeed"
    assert (back / "deepspeed" / "shard-0.pt").read_bytes() == b"0" * 10


def test_other_schemes_are_refused_and_gs_says_what_it_needs():
    with pytest.raises(StorageError, match="unsupported storage scheme 's3'"):
        storage_for("s3://bucket/ckpt")
    # gs:// through gcsfs where it is installed (the images), else Google's storage client.
    expected = FsspecStorage if importlib.util.find_spec("gcsfs") else GcsClientStorage
    assert isinstance(storage_for("gs://bucket/ckpt"), expected)
    assert storage_for("/gcs/bucket/ckpt").atomic_rename is False
    assert storage_for("/tmp/ckpt").atomic_rename is True


def test_a_gs_file_system_a_process_registers_serves_gs(monkeypatch: pytest.MonkeyPatch):
    """A harness's own gs:// (tests/trainers/strategy_group.py registers a folder as gs://) is
    what fsspec would use before gcsfs: it serves gs:// even where gcsfs is not installed."""
    import sys

    from fsspec.implementations.memory import MemoryFileSystem

    # The module, not the read-only view fsspec's package exports under the same name.
    monkeypatch.setitem(sys.modules["fsspec.registry"]._registry, "gs", MemoryFileSystem)
    assert isinstance(storage_for("gs://bucket/ckpt"), FsspecStorage)


def run_trainer(config, capsys) -> tuple[int, list[dict]]:
    """One rank in this process (an in-memory process group), its events parsed."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    distributed.init_process_group(ONE, timeout_s=60, device="cpu")
    try:
        code = Trainer(config, ONE, "cpu", StopRequest()).run()
    finally:
        distributed.destroy_process_group()
        torch.set_num_threads(threads)
    lines = capsys.readouterr().out.splitlines()
    return code, [json.loads(line) for line in lines if line.startswith("{")]


@pytest.mark.parametrize("strategy", ["single", "fsdp"])
def test_a_run_saves_resumes_and_exports_on_an_object_store(strategy, bucket, capsys):
    config = replace(
        preset("tiny"),
        strategy=strategy,
        steps=12,
        seed=7,
        batch_size=8,
        eval_every=0,
        checkpoint_every=4,
        keep=2,
        checkpoint_dir=f"{bucket}/ckpt",
        model_dir=f"{bucket}/model",
    )
    code, first = run_trainer(config, capsys)
    assert code == 0
    losses = {e["step"]: e["loss"] for e in first if e["event"] == "step"}
    storage = storage_for(bucket)
    assert storage.list_dir(f"{bucket}/ckpt") == ["step-00000008", "step-00000012"]
    exported = json.loads(storage.read_bytes(f"{bucket}/model/config.json"))
    assert exported["step"] == 12
    weights = torch.load(io.BytesIO(storage.read_bytes(f"{bucket}/model/model.pt")))
    assert weights["wte.weight"].shape == (256, 64)

    # As if the job had been preempted after step 8: the newest complete checkpoint is 8.
    storage.remove_tree(f"{bucket}/ckpt/step-00000012")
    code, second = run_trainer(config, capsys)
    assert code == 0
    resumed = next(e for e in second if e["event"] == "resumed")
    assert resumed == {**resumed, "step": 8, "path": f"{bucket}/ckpt/step-00000008"}
    again = {e["step"]: e["loss"] for e in second if e["event"] == "step"}
    assert sorted(again) == [9, 10, 11, 12]
    for step, loss in again.items():
        assert loss == pytest.approx(losses[step], rel=1e-6)
