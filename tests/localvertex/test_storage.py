"""The emulator's Cloud Storage (localvertex/storage/) driven by Google's storage client, in
this process: objects are the bucket folders' files both ways, and a team's principal
touches its own folders only (the doors that give replicas that principal are run by
test_storage_walls.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.api_core import exceptions as gexc
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

from localvertex.storage.access import Principal
from localvertex.storage.server import StorageServer, StorageService
from trainers import checkpoint
from trainers.storage import GcsClientStorage
from trainers.torch.checkpoints import CheckpointManager


@pytest.fixture
def service(tmp_path: Path) -> Iterator[StorageService]:
    served = StorageService(tmp_path / "gcs", tmp_path / "uploads")
    served.start()
    yield served
    served.stop()


def client_for(port: int) -> storage.Client:
    return storage.Client(project="p", credentials=AnonymousCredentials(),
                          client_options={"api_endpoint": f"http://127.0.0.1:{port}"})


def test_objects_are_the_bucket_folders_files(service: StorageService, tmp_path: Path) -> None:
    gcs = tmp_path / "gcs"
    (gcs / "team-a" / "jobs" / "1" / "model").mkdir(parents=True)
    (gcs / "team-a" / "jobs" / "1" / "model" / "config.json").write_text("{}")
    bucket = client_for(service.port).bucket("team-a")
    # What the folder route wrote is an object ...
    assert bucket.blob("jobs/1/model/config.json").download_as_bytes() == b"{}"
    # ... and what the client writes (multipart, and resumable in chunks) is a file.
    bucket.blob("jobs/1/ckpt/step-1/COMMITTED").upload_from_string(b"{\"step\": 1}")
    data = os.urandom(600 * 1024)
    bucket.blob("jobs/1/ckpt/step-1/model.pt", chunk_size=256 * 1024).upload_from_string(data)
    assert (gcs / "team-a/jobs/1/ckpt/step-1/model.pt").read_bytes() == data
    assert bucket.blob("jobs/1/ckpt/step-1/model.pt").download_as_bytes(start=5, end=9) \
        == data[5:10]
    listed = client_for(service.port).list_blobs("team-a", prefix="jobs/1/", delimiter="/")
    assert [b.name for b in listed] == [] and listed.prefixes == {"jobs/1/ckpt/",
                                                                  "jobs/1/model/"}
    everything = client_for(service.port).list_blobs("team-a", prefix="jobs/1/", page_size=1)
    assert [b.name for b in everything] == ["jobs/1/ckpt/step-1/COMMITTED",
                                            "jobs/1/ckpt/step-1/model.pt",
                                            "jobs/1/model/config.json"]
    bucket.copy_blob(bucket.blob("jobs/1/model/config.json"), bucket, "jobs/2/config.json")
    bucket.blob("jobs/1/model/config.json").delete()
    assert not (gcs / "team-a/jobs/1/model/config.json").exists()
    bucket.move_blob(bucket.blob("jobs/2/config.json"), "jobs/3/config.json")
    bucket.copy_blob(bucket.blob("jobs/3/config.json"), bucket, "jobs/2/config.json")
    blob = bucket.blob("jobs/2/config.json")
    blob.metadata = {"kept": "no"}  # a PATCH: answered, its body read off the connection
    blob.patch()
    assert blob.download_as_bytes() == b"{}"
    assert (gcs / "team-a/jobs/2/config.json").read_text() == "{}"
    with pytest.raises(gexc.PreconditionFailed):
        bucket.blob("jobs/2/config.json").upload_from_string(b"x", if_generation_match=0)
    with pytest.raises(gexc.BadRequest, match=r"'\.\.'"):
        bucket.blob("jobs/../../escape").upload_from_string(b"x")


def test_a_link_in_a_folder_is_never_followed(service: StorageService, tmp_path: Path) -> None:
    """A job may plant links in its own folder (the folder route); the service, which runs as
    the emulator's user, must not read another team's files through them."""
    gcs = tmp_path / "gcs"
    (gcs / "team-b" / "secret").mkdir(parents=True)
    (gcs / "team-b" / "secret" / "key").write_text("b's")
    (gcs / "team-a" / "jobs").mkdir(parents=True)
    os.symlink(gcs / "team-b" / "secret", gcs / "team-a" / "jobs" / "folder")
    os.symlink(gcs / "team-b" / "secret" / "key", gcs / "team-a" / "jobs" / "file")
    bucket = client_for(service.port).bucket("team-a")
    for name in ("jobs/folder/key", "jobs/file"):
        with pytest.raises(gexc.NotFound):
            bucket.blob(name).download_as_bytes()
    assert list(client_for(service.port).list_blobs("team-a")) == []


def test_a_team_touches_its_own_folders_only(service: StorageService, tmp_path: Path) -> None:
    gcs = tmp_path / "gcs"
    for team in ("a", "b"):
        (gcs / "shared" / "jobs" / team).mkdir(parents=True)
        (gcs / "shared" / "jobs" / team / "ckpt").write_text(team)
    door = StorageServer(service, Principal("team 'b' (job 7)",
                                            lambda: ["gs://shared/jobs/b/"]),
                         ("127.0.0.1", 0))
    door.serve_in_thread("door")
    try:
        mine = client_for(door.server_address[1])
        bucket = mine.bucket("shared")
        assert bucket.blob("jobs/b/ckpt").download_as_bytes() == b"b"
        bucket.blob("jobs/b/step/x").upload_from_string(b"b2")
        with pytest.raises(gexc.Forbidden, match=r"team 'b' .* storage\.objects\.get"):
            bucket.blob("jobs/a/ckpt").download_as_bytes()
        with pytest.raises(gexc.Forbidden, match=r"storage\.objects\.create"):
            bucket.blob("jobs/a/planted").upload_from_string(b"b's")
        with pytest.raises(gexc.Forbidden):
            bucket.blob("jobs/a/ckpt").delete()
        with pytest.raises(gexc.Forbidden):
            list(mine.list_blobs("shared", prefix="jobs/a/"))
        with pytest.raises(gexc.Forbidden):
            list(mine.list_buckets())
        with pytest.raises(gexc.Forbidden, match=r"storage\.objects\.get"):
            bucket.copy_blob(bucket.blob("jobs/a/ckpt"), bucket, "jobs/b/stolen")
        # A listing above its folder shows its own folder only.
        listed = mine.list_blobs("shared", prefix="jobs/", delimiter="/")
        assert list(listed) == [] and listed.prefixes == {"jobs/b/"}
        assert (gcs / "shared/jobs/a/ckpt").read_text() == "a"
        assert not (gcs / "shared/jobs/a/planted").exists()
    finally:
        door.shutdown()
        door.server_close()


def test_the_trainers_checkpoints_commit_through_the_client(service: StorageService,
                                                            tmp_path: Path) -> None:
    """trainers/gcs_client.py (gs:// where gcsfs is not installed, as in the local stack's
    replicas) keeps the last checkpoints and drops an unfinished one, on this service."""
    storage = GcsClientStorage(client_for(service.port))
    root = "gs://team-a/jobs/1/ckpt"
    manager = CheckpointManager(root, keep=2, rank=0, world_size=1)
    manager.storage = storage

    def write(into, folder: str) -> None:
        into.write_bytes(into.join(folder, "model.pt"), b"weights")

    for step in (5, 10, 15):
        manager.save(step, write, {"world_size": 1})
    assert storage.list_dir(root) == ["step-00000010", "step-00000015"]
    folder = checkpoint.begin(storage, root, 20)
    write(storage, folder)  # killed before its marker
    found, removed = manager.prepare()
    assert found.step == 15 and removed == [f"{root}/step-00000020"]
    # On disk the objects are gone; their emptied folders stay, listed by nobody (as in Cloud
    # Storage, a folder is gone with its last object; a job's own folders must stay).
    assert sorted(p.relative_to(tmp_path / "gcs/team-a/jobs/1/ckpt").as_posix() for p in
                  (tmp_path / "gcs/team-a/jobs/1/ckpt").rglob("*") if p.is_file()) == [
        "step-00000010/COMMITTED", "step-00000010/model.pt",
        "step-00000015/COMMITTED", "step-00000015/model.pt"]
    storage.put_tree(str(tmp_path / "gcs/team-a/jobs/1/ckpt/step-00000015"), "gs://team-a/x")
    assert storage.size("gs://team-a/x") == storage.size(f"{root}/step-00000015") > 0
    storage.rename("gs://team-a/x", "gs://team-a/y")
    assert not storage.exists("gs://team-a/x") and storage.exists("gs://team-a/y/model.pt")
