"""The few file operations checkpoints and exports need, behind one small interface.

Checkpoint and export code talks to a `Storage` and never to `os.path` directly, so object
stores slot in next to the local file system: `LocalStorage` for paths (and the Cloud Storage
FUSE mount /gcs/...), `FsspecStorage` for gs:// where gcsfs is installed (the images) and
fsspec's memory file system in tests, `GcsClientStorage` for gs:// through Google's storage
client (a dependency of the package) where gcsfs is not (the local stack's replicas). Both
follow STORAGE_EMULATOR_HOST, so locally gs:// goes to the emulator's Cloud Storage (through
the job's door: only its team's folders). Object stores have no atomic directory rename:
`atomic_rename` tells the checkpoint code to commit by writing the marker file last instead.
"""

from __future__ import annotations

import importlib.util
import os
import posixpath
import shutil
import tempfile
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, BinaryIO

# URL schemes served through fsspec: gs:// in production, memory:// for tests and experiments.
FSSPEC_SCHEMES = ("gs", "memory")


class StorageError(RuntimeError):
    pass


class Storage(ABC):
    atomic_rename: bool
    local: bool  # paths are local file system paths any library can open directly

    @abstractmethod
    def join(self, base: str, *parts: str) -> str: ...

    @abstractmethod
    def exists(self, path: str) -> bool: ...

    @abstractmethod
    def list_dir(self, path: str) -> list[str]:
        """Names (not paths) of the entries of a folder; [] when it does not exist."""

    @abstractmethod
    def make_dirs(self, path: str) -> None: ...

    @abstractmethod
    @contextmanager
    def open_write(self, path: str) -> Iterator[BinaryIO]:
        """A file whose content is durable once the context exits without an error."""

    @abstractmethod
    @contextmanager
    def open_read(self, path: str) -> Iterator[BinaryIO]: ...

    @abstractmethod
    def rename(self, src: str, dst: str) -> None: ...

    @abstractmethod
    def remove_tree(self, path: str) -> None: ...

    @abstractmethod
    def size(self, path: str) -> int:
        """Bytes of a file, or of everything under a folder."""

    def write_bytes(self, path: str, data: bytes) -> None:
        with self.open_write(path) as f:
            f.write(data)

    def read_bytes(self, path: str) -> bytes:
        with self.open_read(path) as f:
            return f.read()

    def replace_file(self, path: str, data: bytes) -> None:
        """Write a file so readers see the old or the new content, never a part."""
        if not self.atomic_rename:
            self.write_bytes(path, data)  # object stores publish an object whole
            return
        tmp = f"{path}.tmp-{uuid.uuid4().hex[:8]}"
        self.write_bytes(tmp, data)
        self.rename(tmp, path)

    @abstractmethod
    def put_tree(self, local_dir: str, path: str) -> None:
        """Copy the files under a local folder to `path` (for libraries that write only to
        local disks, such as DeepSpeed)."""

    @abstractmethod
    def get_tree(self, path: str, local_dir: str) -> None:
        """Copy the files under `path` into a local folder."""


class LocalStorage(Storage):
    """A local (or mounted) file system."""

    local = True

    def __init__(self, atomic_rename: bool = True) -> None:
        self.atomic_rename = atomic_rename

    def join(self, base: str, *parts: str) -> str:
        return os.path.join(base, *parts)

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def list_dir(self, path: str) -> list[str]:
        try:
            return sorted(os.listdir(path))
        except FileNotFoundError:
            return []

    def make_dirs(self, path: str) -> None:
        os.makedirs(path, exist_ok=True)

    @contextmanager
    def open_write(self, path: str) -> Iterator[BinaryIO]:
        with open(path, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())  # the commit marker must never reach disk before the data

    @contextmanager
    def open_read(self, path: str) -> Iterator[BinaryIO]:
        with open(path, "rb") as f:
            yield f

    def rename(self, src: str, dst: str) -> None:
        os.replace(src, dst)
        _fsync_dir(os.path.dirname(os.path.abspath(dst)))

    def remove_tree(self, path: str) -> None:
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        elif os.path.exists(path):
            os.remove(path)

    def size(self, path: str) -> int:
        if os.path.isfile(path):
            return os.path.getsize(path)
        return sum(
            os.path.getsize(os.path.join(folder, name))
            for folder, _, names in os.walk(path)
            for name in names
        )

    def put_tree(self, local_dir: str, path: str) -> None:
        shutil.copytree(local_dir, path, dirs_exist_ok=True)

    def get_tree(self, path: str, local_dir: str) -> None:
        shutil.copytree(path, local_dir, dirs_exist_ok=True)


class FsspecStorage(Storage):
    """An fsspec file system addressed by URLs (gs://bucket/a/b). An object store: a folder is
    a name prefix, objects appear whole when their upload completes, and there is no rename of
    a folder, so checkpoints commit by their marker object alone."""

    atomic_rename = False
    local = False

    def __init__(self, fs: Any) -> None:
        self.fs = fs

    def join(self, base: str, *parts: str) -> str:
        return posixpath.join(base, *parts)

    def exists(self, path: str) -> bool:
        self._forget(path)
        return self.fs.exists(path)

    def list_dir(self, path: str) -> list[str]:
        self._forget(path)
        try:
            entries = self.fs.ls(path, detail=False)
        except FileNotFoundError:
            return []
        return sorted(posixpath.basename(e.rstrip("/")) for e in entries)

    def make_dirs(self, path: str) -> None:
        self.fs.makedirs(path, exist_ok=True)  # a no-op on object stores

    @contextmanager
    def open_write(self, path: str) -> Iterator[BinaryIO]:
        # The object is published when the file closes without an error (the upload ends).
        with self.fs.open(path, "wb") as f:
            yield f

    @contextmanager
    def open_read(self, path: str) -> Iterator[BinaryIO]:
        with self.fs.open(path, "rb") as f:
            yield f

    def rename(self, src: str, dst: str) -> None:
        self.fs.mv(src, dst, recursive=True)

    def remove_tree(self, path: str) -> None:
        self._forget(path)
        if self.fs.exists(path):
            self.fs.rm(path, recursive=True)

    def size(self, path: str) -> int:
        self._forget(path)
        return int(self.fs.du(path, total=True))

    def put_tree(self, local_dir: str, path: str) -> None:
        for folder, _, names in os.walk(local_dir):
            for name in names:
                source = os.path.join(folder, name)
                relative = os.path.relpath(source, local_dir).replace(os.sep, "/")
                self.fs.put_file(source, self.join(path, relative))

    def get_tree(self, path: str, local_dir: str) -> None:
        self._forget(path)
        base = self.fs._strip_protocol(path)
        for remote in self.fs.find(path):
            relative = posixpath.relpath(self.fs._strip_protocol(remote), base)
            target = os.path.join(local_dir, *relative.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            self.fs.get_file(remote, target)

    def _forget(self, path: str) -> None:
        # Listings are cached per process; other ranks (and other attempts) write too.
        self.fs.invalidate_cache(path)


_GS = "gs://"
# A file written to gs:// through Google's client stays in memory up to this, then spills to a
# temporary file until its upload.
_SPOOL = 64 << 20


def _split_gs(path: str) -> tuple[str, str]:
    if not path.startswith(_GS):
        raise StorageError(f"{path}: not a gs:// URL")
    bucket, _, key = path[len(_GS):].partition("/")
    if not bucket:
        raise StorageError(f"{path}: no bucket")
    return bucket, key.strip("/")


class GcsClientStorage(Storage):
    """gs:// through Google's storage client (google-cloud-storage, a dependency of the
    package) where gcsfs is not installed: the local stack's replicas, whose
    STORAGE_EMULATOR_HOST names the emulator's Cloud Storage (its door in the job's namespace);
    on Vertex, the replica's own credentials and project. An object store, as FsspecStorage's:
    a folder is a name prefix, an object appears whole when its upload ends, a folder is
    renamed object by object, so checkpoints commit by their marker."""

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
        bucket, key = _split_gs(path)
        return self.client.bucket(bucket).blob(key)

    def _under(self, path: str) -> Iterator[Any]:
        """The objects under a folder path (its name and a '/')."""
        bucket, key = _split_gs(path)
        return iter(self.client.list_blobs(bucket, prefix=f"{key}/" if key else ""))

    def join(self, base: str, *parts: str) -> str:
        return posixpath.join(base, *parts)

    def exists(self, path: str) -> bool:
        bucket, key = _split_gs(path)
        if not key:
            return self.client.bucket(bucket).exists()
        if self._blob(path).exists():
            return True
        return any(True for _ in self.client.list_blobs(bucket, prefix=f"{key}/",
                                                        max_results=1))

    def list_dir(self, path: str) -> list[str]:
        bucket, key = _split_gs(path)
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
        moves = [(source, _split_gs(dst)[1])] if source.exists() else [
            (blob, f"{_split_gs(dst)[1]}/{blob.name[len(_split_gs(src)[1]) + 1:]}")
            for blob in self._under(src)]
        for blob, name in moves:
            blob.bucket.copy_blob(blob, self.client.bucket(_split_gs(dst)[0]), name)
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
        _, key = _split_gs(path)
        for blob in self._under(path):
            relative = blob.name[len(key) + 1:] if key else blob.name
            target = os.path.join(local_dir, *relative.split("/"))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            blob.download_to_filename(target)


def storage_for(url: str) -> Storage:
    """The storage that serves `url`: a local path, /gcs/... (FUSE), gs:// or memory://."""
    scheme, sep, _ = url.partition("://")
    if sep:
        if scheme not in FSSPEC_SCHEMES:
            raise StorageError(
                f"{url}: unsupported storage scheme {scheme!r}; use a local path, /gcs/... or gs://"
            )
        if scheme == "gs" and not _fsspec_serves_gs():
            return GcsClientStorage()
        return FsspecStorage(_filesystem(scheme, url))
    # Cloud Storage FUSE copies objects one by one on a folder rename: not atomic.
    return LocalStorage(atomic_rename=not os.path.abspath(url).startswith("/gcs/"))


def _fsspec_serves_gs() -> bool:
    """Whether fsspec has a gs:// file system here: gcsfs installed (the images), or one a
    process registered itself (a harness's stand-in), which fsspec would use before gcsfs."""
    if importlib.util.find_spec("gcsfs") is not None:
        return True
    try:
        from fsspec.registry import registry
    except ImportError:
        return False
    return "gs" in registry


def _filesystem(scheme: str, url: str) -> Any:
    try:
        import fsspec

        return fsspec.filesystem(scheme)
    except ImportError as exc:
        # fsspec names the missing package (gcsfs for gs://).
        raise StorageError(
            f"{url}: {exc}; or use the Cloud Storage FUSE mount /gcs/<bucket>/..."
        ) from None


def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the rename itself is still atomic
    finally:
        os.close(fd)
