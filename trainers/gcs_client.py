"""gs:// for checkpoints and exports through Google's storage client (google-cloud-storage,
a dependency of the package), where gcsfs is not installed: the local stack's replicas, whose
STORAGE_EMULATOR_HOST names the emulator's Cloud Storage (its door in the job's namespace);
on Vertex the replica's own credentials and project.

An object store, as FsspecStorage's: a folder is a name prefix, an object appears whole when
its upload ends, a folder is renamed object by object, so checkpoints commit by their marker.
"""

from __future__ import annotations

import os
import posixpath
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, BinaryIO

from trainers.storage import Storage, StorageError

_GS = "gs://"
# Files up to this stay in memory while written; larger ones spill to a temporary file.
_SPOOL = 64 << 20


def _split(path: str) -> tuple[str, str]:
    if not path.startswith(_GS):
        raise StorageError(f"{path}: not a gs:// URL")
    bucket, _, key = path[len(_GS):].partition("/")
    if not bucket:
        raise StorageError(f"{path}: no bucket")
    return bucket, key.strip("/")


class GcsClientStorage(Storage):
    atomic_rename = False
    local = False

    def __init__(self, client: Any = None) -> None:
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            from google.cloud import storage

            # Against an emulator (STORAGE_EMULATOR_HOST) the client needs no credentials and
            # takes no project of ours; on Vertex, the replica's project.
            self._client = storage.Client(project=os.environ.get("CLOUD_ML_PROJECT_ID"))
        return self._client

    def _blob(self, path: str) -> Any:
        bucket, key = _split(path)
        return self.client.bucket(bucket).blob(key)

    def _under(self, path: str) -> Iterator[Any]:
        """The objects under a folder path (its name and a '/')."""
        bucket, key = _split(path)
        return iter(self.client.list_blobs(bucket, prefix=f"{key}/" if key else ""))

    def join(self, base: str, *parts: str) -> str:
        return posixpath.join(base, *parts)

    def exists(self, path: str) -> bool:
        bucket, key = _split(path)
        if not key:
            return self.client.bucket(bucket).exists()
        if self._blob(path).exists():
            return True
        return any(True for _ in self.client.list_blobs(bucket, prefix=f"{key}/",
                                                        max_results=1))

    def list_dir(self, path: str) -> list[str]:
        bucket, key = _split(path)
        listed = self.client.list_blobs(bucket, prefix=f"{key}/" if key else "", delimiter="/")
        names = [posixpath.basename(b.name) for b in listed]
        names += [posixpath.basename(p.rstrip("/")) for p in listed.prefixes]
        return sorted(n for n in set(names) if n)

    def make_dirs(self, path: str) -> None:
        pass  # an object store has no folders

    @contextmanager
    def open_write(self, path: str) -> Iterator[BinaryIO]:
        # Uploaded when the block ends without an error: the object then appears whole.
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL) as spool:
            yield spool  # type: ignore[misc]
            spool.seek(0)
            self._blob(path).upload_from_file(spool)

    @contextmanager
    def open_read(self, path: str) -> Iterator[BinaryIO]:
        from google.api_core import exceptions as gexc

        with tempfile.SpooledTemporaryFile(max_size=_SPOOL) as spool:
            try:
                self._blob(path).download_to_file(spool)
            except gexc.NotFound:
                raise FileNotFoundError(path) from None
            spool.seek(0)
            yield spool  # type: ignore[misc]

    def rename(self, src: str, dst: str) -> None:
        source = self._blob(src)
        moves = [(source, _split(dst)[1])] if source.exists() else [
            (blob, f"{_split(dst)[1]}/{blob.name[len(_split(src)[1]) + 1:]}")
            for blob in self._under(src)]
        for blob, name in moves:
            blob.bucket.copy_blob(blob, self.client.bucket(_split(dst)[0]), name)
            blob.delete()

    def remove_tree(self, path: str) -> None:
        from google.api_core import exceptions as gexc

        for blob in [self._blob(path), *self._under(path)]:
            with suppress(gexc.NotFound):
                blob.delete()

    def size(self, path: str) -> int:
        blob = self._blob(path)
        if blob.exists():
            blob.reload()
            return int(blob.size or 0)
        return sum(int(b.size or 0) for b in self._under(path))

    def put_tree(self, local_dir: str, path: str) -> None:
        for folder, _, names in os.walk(local_dir):
            for name in names:
                source = os.path.join(folder, name)
                relative = os.path.relpath(source, local_dir).replace(os.sep, "/")
                self._blob(self.join(path, relative)).upload_from_filename(source)

    def get_tree(self, path: str, local_dir: str) -> None:
        _, key = _split(path)
        for blob in self._under(path):
            relative = blob.name[len(key) + 1:] if key else blob.name
            target = os.path.join(local_dir, *relative.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            blob.download_to_filename(target)
