"""A job's replicas find the environment's prebuilt torch extensions (DeepSpeed's CPU op) in a
copy of their own (localvertex/replicas/torch_extensions.py); the DeepSpeed job of
tests/integration/test_own_framework.py runs on it as its team's user."""

from __future__ import annotations

import os
from pathlib import Path

from localvertex.replicas import torch_extensions
from localvertex.replicas.sandbox import Identity


def prebuilt(tmp_path: Path) -> Path:
    folder = tmp_path / "env" / "torch-extensions"
    (folder / "deepspeed_shm_comm").mkdir(parents=True)
    built = folder / "deepspeed_shm_comm" / "deepspeed_shm_comm.so"
    built.write_bytes(b"\x7fELF")
    os.utime(built, (1_000_000, 1_000_000))
    (folder / ".built").touch()
    return folder


def test_the_jobs_copy_is_its_users_and_keeps_the_builds_times(tmp_path: Path) -> None:
    work = tmp_path / "work" / "7"
    work.mkdir(parents=True)
    who = Identity(uid=54321, gid=54321, name="lvt-team")  # as the emulator (root) runs
    folder = prebuilt(tmp_path)
    env = torch_extensions.for_replica(work, who, folder)
    copied = work / "torch-extensions" / "deepspeed_shm_comm" / "deepspeed_shm_comm.so"
    assert env == {"TORCH_EXTENSIONS_DIR": str(work / "torch-extensions")}
    assert copied.read_bytes() == b"\x7fELF" and copied.stat().st_mtime == 1_000_000
    assert copied.stat().st_uid == who.uid and copied.parent.stat().st_uid == who.uid
    # The job's other replicas use the same copy; nothing half-copied is left.
    copied.write_bytes(b"kept")
    assert torch_extensions.for_replica(work, who, folder) == env
    assert copied.read_bytes() == b"kept" and sorted(p.name for p in work.iterdir()) == [
        "torch-extensions"]


def test_nothing_is_set_until_the_build_is_complete(tmp_path: Path) -> None:
    folder = prebuilt(tmp_path)
    (folder / ".built").unlink()  # a build that never finished, or none
    work = tmp_path / "work" / "8"
    work.mkdir(parents=True)
    assert torch_extensions.for_replica(work, None, folder) == {}
    assert torch_extensions.for_replica(work, None, tmp_path / "missing") == {}
    assert list(work.iterdir()) == []
