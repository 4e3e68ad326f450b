"""Cloud Storage objects kept as plain files: gs://bucket/a/b is <root>/bucket/a/b.

The folder tree stays the truth: what a replica writes through the folder route (its
AIP_*_DIR, the /gcs/ FUSE form), what the control plane reads through CP_LOCAL_GCS_ROOT and
what Google's storage client writes through the service (server.py) are the same files. So
nothing is kept beside them: an object's generation is its file's modification time in
nanoseconds, its size the file's, its content type guessed from its name.

Every path is opened one name at a time from the bucket's folder without following links
(O_NOFOLLOW relative to the parent's descriptor), and listings skip links: the service runs
as the emulator's user, and a link a job planted in its own folder must never lead it into
another team's. An object is written to a hidden file beside its name and renamed over it, so
a reader sees the old bytes or the new ones, never part.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import mimetypes
import os
import re
import stat
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import google_crc32c

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
# Written files are hidden from listings until renamed to their object's name.
PARTIAL_PREFIX = ".lvgcs-partial-"
# Cloud Storage's bucket names: 3-63 lower-case letters, digits, '-', '_' and '.'.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$")
_MAX_NAME_BYTES = 1024


class StorageError(Exception):
    """An answer of the JSON API's: its HTTP status and message."""

    def __init__(self, status: int, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.reason = reason or {400: "invalid", 403: "forbidden", 404: "notFound",
                                 409: "conflict", 412: "conditionNotMet"}.get(status, "error")


@dataclass(frozen=True)
class ObjectInfo:
    bucket: str
    name: str
    size: int
    generation: int  # the file's mtime in ns: a rewrite is a new generation
    updated_ns: int
    # base64 of the digests, as the JSON API gives them; "" when not computed
    md5: str = ""
    crc32c: str = ""

    @property
    def content_type(self) -> str:
        return mimetypes.guess_type(self.name)[0] or "application/octet-stream"


def check_bucket(bucket: str) -> str:
    if not _BUCKET.match(bucket) or ".." in bucket:
        raise StorageError(400, f"Invalid bucket name: {bucket!r}")
    return bucket


def name_parts(name: str) -> list[str]:
    """An object's name as folder names and its file's: only names the folder tree can hold
    (no empty, '.' or '..' segment, no NUL, no hidden partial file's prefix)."""
    if not name or len(name.encode("utf-8", "surrogatepass")) > _MAX_NAME_BYTES:
        raise StorageError(400, f"Invalid object name: {name[:80]!r} (1 to 1024 bytes)")
    parts = name.split("/")
    if any(p in ("", ".", "..") or "\0" in p or p.startswith(PARTIAL_PREFIX) for p in parts):
        raise StorageError(400, f"Invalid object name: {name[:200]!r}: the local buckets keep "
                                "objects as files, so no empty, '.' or '..' segment")
    return parts


class Buckets:
    """The buckets under ROOT (the emulator's <data dir>/gcs)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).absolute()

    # -- buckets -------------------------------------------------------------------------

    def bucket_names(self) -> list[str]:
        if not self.root.is_dir():
            return []
        return sorted(e.name for e in os.scandir(self.root)
                      if e.is_dir(follow_symlinks=False) and _BUCKET.match(e.name))

    def bucket_exists(self, bucket: str) -> bool:
        path = self.root / check_bucket(bucket)
        return path.is_dir() and not path.is_symlink()

    def create_bucket(self, bucket: str) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(self.root / check_bucket(bucket), 0o755)
        except FileExistsError:
            raise StorageError(409, f"The bucket {bucket} already exists.") from None

    def delete_bucket(self, bucket: str) -> None:
        path = self.root / check_bucket(bucket)
        try:
            os.rmdir(path)
        except FileNotFoundError:
            raise StorageError(404, f"The bucket {bucket} does not exist.") from None
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise StorageError(409, f"The bucket {bucket} is not empty.") from None
            raise

    # -- objects -------------------------------------------------------------------------

    @contextlib.contextmanager
    def _folder(self, bucket: str, parts: list[str], create: bool) -> Iterator[int]:
        """The descriptor of the folder holding PARTS[-1], opened name by name from the
        bucket's without following links (made, as its parent's owner, when CREATE)."""
        check_bucket(bucket)
        if create:
            self.root.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileExistsError):
                os.mkdir(self.root / bucket, 0o755)
        try:
            fd = os.open(self.root / bucket, _DIR_FLAGS)
        except (FileNotFoundError, NotADirectoryError):
            raise StorageError(404, f"The bucket {bucket} does not exist.") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise StorageError(404, f"The bucket {bucket} does not exist.") from None
            raise
        try:
            for name in parts[:-1]:
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o755, dir_fd=fd)
                        _inherit(fd, name, directory=True)
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    if exc.errno in (errno.ENOENT,):
                        raise StorageError(404, "No such object: "
                                                f"{bucket}/{'/'.join(parts)}") from None
                    if exc.errno in (errno.ENOTDIR, errno.ELOOP):
                        what = "an object" if exc.errno == errno.ENOTDIR else "a link"
                        raise StorageError(409 if create else 404,
                                           f"{bucket}/{'/'.join(parts)}: {name} is {what}, "
                                           "not a folder") from None
                    raise
                os.close(fd)
                fd = child
            yield fd
        finally:
            os.close(fd)

    def info(self, bucket: str, name: str) -> ObjectInfo:
        parts = name_parts(name)
        with self._folder(bucket, parts, create=False) as folder:
            found = _object_stat(folder, parts[-1], bucket, name)
        return ObjectInfo(bucket, name, found.st_size, found.st_mtime_ns, found.st_mtime_ns)

    def open_read(self, bucket: str, name: str) -> tuple[ObjectInfo, int]:
        """The object's facts and a descriptor of its file (the caller closes it)."""
        parts = name_parts(name)
        with self._folder(bucket, parts, create=False) as folder:
            try:
                fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK,
                             dir_fd=folder)
            except OSError as exc:
                if exc.errno in (errno.ENOENT, errno.ELOOP, errno.EISDIR, errno.ENXIO):
                    raise StorageError(404, f"No such object: {bucket}/{name}") from None
                raise
        found = os.fstat(fd)
        if not stat.S_ISREG(found.st_mode):
            os.close(fd)
            raise StorageError(404, f"No such object: {bucket}/{name}")
        return ObjectInfo(bucket, name, found.st_size, found.st_mtime_ns, found.st_mtime_ns), fd

    def write(self, bucket: str, name: str, chunks: Iterable[bytes],
              if_generation_match: int | None = None,
              expect: dict[str, str] | None = None) -> ObjectInfo:
        """Write the object from CHUNKS; it appears whole when the last chunk is in.
        IF_GENERATION_MATCH: 0 = only if there is none yet, N = only over generation N;
        EXPECT: the digests the client sent ({"md5Hash": .., "crc32c": ..}), checked before
        the object appears (400 on a mismatch, as Cloud Storage answers)."""
        parts = name_parts(name)
        with self._folder(bucket, parts, create=True) as folder:
            if if_generation_match is not None:
                _check_generation(folder, parts[-1], bucket, name, if_generation_match)
            partial = f"{PARTIAL_PREFIX}{uuid.uuid4().hex}"
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                         dir_fd=folder)
            md5, crc = hashlib.md5(usedforsecurity=False), google_crc32c.Checksum()
            try:
                with os.fdopen(fd, "wb") as out:
                    for chunk in chunks:
                        out.write(chunk)
                        md5.update(chunk)
                        crc.update(chunk)
                    out.flush()
                    os.fsync(out.fileno())
                digests = {"md5Hash": _b64(md5.digest()), "crc32c": _b64(crc.digest())}
                for key, wanted in (expect or {}).items():
                    if wanted and digests.get(key) not in (None, wanted):
                        raise StorageError(400, f"Provided {key} {wanted!r} doesn't match "
                                                f"calculated {key} {digests[key]!r}.")
                _inherit(folder, partial, directory=False)
                try:
                    os.rename(partial, parts[-1], src_dir_fd=folder, dst_dir_fd=folder)
                except IsADirectoryError:
                    raise StorageError(409, f"{bucket}/{name}: a folder of objects has that "
                                            "name") from None
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(partial, dir_fd=folder)
                raise
            found = os.stat(parts[-1], dir_fd=folder, follow_symlinks=False)
        return ObjectInfo(bucket, name, found.st_size, found.st_mtime_ns, found.st_mtime_ns,
                          digests["md5Hash"], digests["crc32c"])

    def move(self, bucket: str, name: str, to_name: str) -> ObjectInfo:
        """Rename an object within its bucket: the file moves, as one rename."""
        source, target = name_parts(name), name_parts(to_name)
        with self._folder(bucket, source, create=False) as here, \
                self._folder(bucket, target, create=True) as there:
            _object_stat(here, source[-1], bucket, name)
            try:
                os.rename(source[-1], target[-1], src_dir_fd=here, dst_dir_fd=there)
            except IsADirectoryError:
                raise StorageError(409, f"{bucket}/{to_name}: a folder of objects has that "
                                        "name") from None
            found = os.stat(target[-1], dir_fd=there, follow_symlinks=False)
        return ObjectInfo(bucket, to_name, found.st_size, found.st_mtime_ns, found.st_mtime_ns)

    def make_folder(self, bucket: str, name: str) -> None:
        """A "folder/" placeholder object: its folder (Cloud Storage consoles make these)."""
        parts = name_parts(name.rstrip("/"))
        with self._folder(bucket, [*parts, "x"], create=True):
            pass

    def delete(self, bucket: str, name: str, if_generation_match: int | None = None) -> None:
        parts = name_parts(name)
        with self._folder(bucket, parts, create=False) as folder:
            if if_generation_match is not None:
                _check_generation(folder, parts[-1], bucket, name, if_generation_match)
            _object_stat(folder, parts[-1], bucket, name)
            os.unlink(parts[-1], dir_fd=folder)

    def listing(self, bucket: str, prefix: str, recursive: bool
                ) -> tuple[list[ObjectInfo], list[str]]:
        """The objects whose names start with PREFIX (all under it when RECURSIVE, else those
        at its level) and, when not RECURSIVE, the folders at its level that hold an object
        somewhere below, as "a/b/" (an empty folder is no prefix, as in Cloud Storage, where
        a "folder" is gone with its last object). Unordered."""
        folder_parts, _, start = prefix.rpartition("/")
        try:
            parts = name_parts(folder_parts) if folder_parts else []
        except StorageError:
            return [], []
        objects: list[ObjectInfo] = []
        folders: list[str] = []
        try:
            with self._folder(bucket, [*parts, "x"], create=False) as fd:
                lead = f"{folder_parts}/" if folder_parts else ""
                for entry in _scan(fd):
                    if not entry.name.startswith(start):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        if recursive:
                            _walk_under(fd, entry.name, bucket, f"{lead}{entry.name}/",
                                        objects)
                        elif _holds_a_file(fd, entry.name):
                            folders.append(f"{lead}{entry.name}/")
                    elif entry.is_file(follow_symlinks=False):
                        objects.append(_info(bucket, f"{lead}{entry.name}", fd, entry.name))
        except StorageError as exc:
            if exc.status == 404:
                return [], []  # no such folder: nothing under that prefix
            raise
        return objects, folders


def _holds_a_file(parent: int, name: str) -> bool:
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError:
        return False
    try:
        entries = _scan(fd)
        return any(e.is_file(follow_symlinks=False) for e in entries) or any(
            _holds_a_file(fd, e.name) for e in entries if e.is_dir(follow_symlinks=False))
    finally:
        os.close(fd)


def _walk_under(parent: int, name: str, bucket: str, lead: str, out: list[ObjectInfo]) -> None:
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError:  # gone, or swapped for a link meanwhile: not followed
        return
    try:
        for entry in _scan(fd):
            if entry.is_dir(follow_symlinks=False):
                _walk_under(fd, entry.name, bucket, f"{lead}{entry.name}/", out)
            elif entry.is_file(follow_symlinks=False):
                out.append(_info(bucket, f"{lead}{entry.name}", fd, entry.name))
    finally:
        os.close(fd)


def _scan(folder: int) -> list[os.DirEntry[str]]:
    """The entries of a folder by its descriptor, less written files not yet renamed."""
    with os.scandir(folder) as entries:
        return [e for e in entries if not e.name.startswith(PARTIAL_PREFIX)]


def _info(bucket: str, name: str, folder: int, leaf: str) -> ObjectInfo:
    found = os.stat(leaf, dir_fd=folder, follow_symlinks=False)
    return ObjectInfo(bucket, name, found.st_size, found.st_mtime_ns, found.st_mtime_ns)


def _b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode()


def digests(fd: int) -> tuple[str, str]:
    """(md5Hash, crc32c) of an open file, read from its start."""
    md5, crc = hashlib.md5(usedforsecurity=False), google_crc32c.Checksum()
    os.lseek(fd, 0, os.SEEK_SET)
    while chunk := os.read(fd, 1 << 20):
        md5.update(chunk)
        crc.update(chunk)
    return _b64(md5.digest()), _b64(crc.digest())


def _check_generation(folder: int, leaf: str, bucket: str, name: str, wanted: int) -> None:
    try:
        found = os.stat(leaf, dir_fd=folder, follow_symlinks=False)
        generation = found.st_mtime_ns if stat.S_ISREG(found.st_mode) else 0
    except FileNotFoundError:
        generation = 0
    if generation != wanted:
        raise StorageError(412, f"{bucket}/{name}: generation {generation}, the request "
                                f"wanted {wanted} (ifGenerationMatch)")


def _inherit(folder: int, name: str, *, directory: bool) -> None:
    """What the service makes inside a folder of someone else's (a job's output folder, its
    team's user's: output_folders.py) becomes that user's and group's, as if the job had
    written it, so the job and the model servers reading its folders read it too; in the
    emulator's own folders it stays the emulator's."""
    owner = os.fstat(folder)
    if owner.st_uid == os.geteuid():
        return
    os.chown(name, owner.st_uid, owner.st_gid, dir_fd=folder, follow_symlinks=False)
    mode = (stat.S_IMODE(owner.st_mode) & 0o7770) if directory else 0o640
    os.chmod(name, mode, dir_fd=folder)


def _object_stat(folder: int, leaf: str, bucket: str, name: str) -> os.stat_result:
    """The object's file, never followed through a link; 404 unless it is a regular file."""
    try:
        found = os.stat(leaf, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        raise StorageError(404, f"No such object: {bucket}/{name}") from None
    if not stat.S_ISREG(found.st_mode):
        raise StorageError(404, f"No such object: {bucket}/{name}")
    return found
