"""The few file operations checkpoints and exports need, behind one small interface.

Checkpoint and export code talks to a `Storage` and never to `os.path` directly, so object
stores slot in next to the local file system. Object stores have no atomic directory rename:
`atomic_rename` tells the checkpoint code to commit by writing the marker file last instead.
"""

from __future__ import annotations

import os
import shutil
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO


class StorageError(RuntimeError):
    pass


class Storage(ABC):
    atomic_rename: bool

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


class LocalStorage(Storage):
    """A local (or mounted) file system."""

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


def storage_for(url: str) -> Storage:
    """The storage that serves `url`: local paths now; gs:// is refused with a clear message."""
    if url.startswith("gs://"):
        raise StorageError(
            f"{url}: gs:// storage needs fsspec/gcsfs, which this trainer image does not include "
            "yet; use a local path or the Cloud Storage FUSE mount /gcs/<bucket>/..."
        )
    if "://" in url:
        raise StorageError(f"{url}: unsupported storage scheme")
    # Cloud Storage FUSE copies objects one by one on a folder rename: not atomic.
    return LocalStorage(atomic_rename=not os.path.abspath(url).startswith("/gcs/"))


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
