"""Request bodies and uploads for the storage service (server.py): a body as sent (length or
chunked), a multipart/related upload's metadata and media, resumable upload sessions, and the
digests of objects already computed.

A resumable upload's bytes gather in a file of the session's own outside the buckets
(<data dir>/storage-uploads/) and become the object only when the last chunk is in, so no
reader ever sees part of it; a session belongs to whoever began it (a job's door cannot
finish another's). Sessions live as long as the emulator: a restart forgets them, and the
client starts its upload again, as after a session Cloud Storage expired.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from email.message import Message
from email.parser import BytesParser
from email.policy import HTTP
from pathlib import Path
from typing import IO, Any

from localvertex.storage.objects import ObjectInfo, StorageError

_CHUNK = 1 << 20
_CONTENT_RANGE = re.compile(r"^bytes (?:(\d+)-(\d+)|\*)/(\d+|\*)$")
# The most one request body may hold in memory (a media or multipart upload, a chunk of a
# resumable one): Google's clients send 100 MiB chunks at most by default.
MAX_BODY = 256 << 20
_DIGESTS_KEPT = 10_000


def read_body(stream: IO[bytes], headers: Message) -> bytes:
    """The request's body: Content-Length bytes, or the chunks of a chunked one."""
    if "chunked" in headers.get("Transfer-Encoding", "").lower():
        parts, total = [], 0
        while True:
            size = int(stream.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while stream.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            total += size
            if total > MAX_BODY:
                raise StorageError(413, f"request body over {MAX_BODY} bytes")
            parts.append(stream.read(size))
            stream.readline()
    length = int(headers.get("Content-Length") or 0)
    if length > MAX_BODY:
        raise StorageError(413, f"request body over {MAX_BODY} bytes: use a resumable upload")
    return stream.read(length) if length else b""


def multipart(content_type: str, body: bytes) -> tuple[dict[str, Any], bytes]:
    """(metadata, media) of a multipart/related upload: JSON metadata, then the data."""
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    if not message.is_multipart():
        raise StorageError(400, "uploadType=multipart needs a multipart/related body")
    parts = list(message.iter_parts())
    if len(parts) != 2:
        raise StorageError(400, "a multipart upload has two parts: metadata, then media")
    metadata = json.loads(parts[0].get_payload(decode=True) or b"{}")
    return metadata, parts[1].get_payload(decode=True) or b""


@dataclass(frozen=True)
class Session:
    id: str
    bucket: str
    name: str
    who: str
    if_generation_match: int | None
    path: Path


class Uploads:
    def __init__(self, folder: Path) -> None:
        self.folder = Path(folder)
        shutil.rmtree(self.folder, ignore_errors=True)  # an earlier emulator's: forgotten
        self._sessions: dict[str, Session] = {}
        self._digests: OrderedDict[tuple[str, str, int, int], tuple[str, str]] = OrderedDict()
        self._lock = threading.Lock()

    def begin(self, bucket: str, name: str, who: str, if_generation_match: int | None) -> str:
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        session = Session(uuid.uuid4().hex, bucket, name, who, if_generation_match,
                          self.folder / uuid.uuid4().hex)
        session.path.touch(mode=0o600)
        with self._lock:
            self._sessions[session.id] = session
        return session.id

    def get(self, upload_id: str, who: str) -> Session:
        with self._lock:
            found = self._sessions.get(upload_id)
        if found is None or found.who != who:
            raise StorageError(404, f"No such upload session: {upload_id[:40]!r}")
        return found

    def size(self, session: Session) -> int:
        return session.path.stat().st_size

    def append(self, session: Session, content_range: str, data: bytes) -> bool | None:
        """Add a chunk (its Content-Range, "bytes A-B/T", "bytes */T" or "bytes */*"); True
        when the upload is complete, None while more is to come."""
        match = _CONTENT_RANGE.match(content_range.strip()) if content_range else None
        if content_range and match is None:
            raise StorageError(400, f"Content-Range {content_range[:60]!r}")
        have = self.size(session)
        first, _, total = match.groups() if match else (None, None, str(len(data)))
        if first is not None and data:
            start = int(first)
            if start > have:
                raise StorageError(400, f"chunk starts at {start}, {have} bytes received")
            with open(session.path, "r+b") as out:  # a repeated chunk overwrites its bytes
                out.seek(start)
                out.write(data)
                out.truncate()
            have = start + len(data)
        elif first is None and data and not content_range:
            session.path.write_bytes(data)
            have = len(data)
        if total == "*" or int(total) > have:
            return None
        return True

    def chunks(self, session: Session) -> Iterator[bytes]:
        with open(session.path, "rb") as source:
            while chunk := source.read(_CHUNK):
                yield chunk

    def end(self, session: Session) -> None:
        with self._lock:
            self._sessions.pop(session.id, None)
        session.path.unlink(missing_ok=True)

    def digests_of(self, info: ObjectInfo, compute: Callable[[], tuple[str, str]]
                   ) -> tuple[str, str]:
        """An object's (md5Hash, crc32c), computed once per generation."""
        key = (info.bucket, info.name, info.generation, info.size)
        with self._lock:
            found = self._digests.get(key)
            if found is not None:
                self._digests.move_to_end(key)
                return found
        found = compute()
        with self._lock:
            self._digests[key] = found
            while len(self._digests) > _DIGESTS_KEPT:
                self._digests.popitem(last=False)
        return found

    def remember(self, info: ObjectInfo) -> None:
        if info.md5:
            self.digests_of(info, lambda: (info.md5, info.crc32c))
