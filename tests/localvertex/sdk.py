"""Google's high-level SDK (`google.cloud.aiplatform`) pointed at the emulator, unchanged but
for its channel.

Vertex speaks gRPC over TLS and the SDK has no plaintext option: `aiplatform.init(api_endpoint=)`
still builds a TLS channel (VERTEX_FACTS.md section 8). The emulator speaks plaintext on
loopback, so `sdk_channel` makes google-api-core's channel factory build the emulator's
channel (and only its) on gRPC's local credentials instead of TLS; every SDK class, request
and poll above it is Google's own. The emulator's token is given as a user gives the SDK an
access token, `aiplatform.init(credentials=google.oauth2.credentials.Credentials(token))`:
google-api-core's own auth plugin sends it (`authorization: Bearer ...`) on every call.
Cloud Storage uploads the SDK makes (staging a script's package) go through Google's storage
client to `StagingUploads`, which writes them where the emulator keeps a bucket today (a
folder: localvertex/replicas/storage.py).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import grpc
import pytest
from google.api_core import grpc_helpers
from google.cloud import aiplatform
from google.oauth2.credentials import Credentials

from localvertex.replicas.storage import local_path
from tests.localvertex.helpers import PROJECT, EmulatorProcess

LOCATION = "us-central1"
STAGING_BUCKET = "gs://sdk-staging"


@contextmanager
def sdk_channel(monkeypatch: pytest.MonkeyPatch, emulator: EmulatorProcess) -> Iterator[None]:
    """aiplatform.init for the emulator: the project, region, staging bucket and the
    emulator's token as the user's credentials, and plaintext gRPC to the emulator's address."""
    secure = grpc_helpers.create_channel

    def create_channel(target, *args, **kwargs):
        if target == emulator.address:
            # Loopback only: gRPC sends call credentials on a plaintext channel only there.
            kwargs["ssl_credentials"] = grpc.local_channel_credentials()
        return secure(target, *args, **kwargs)

    monkeypatch.setattr(grpc_helpers, "create_channel", create_channel)
    aiplatform.init(project=PROJECT, location=LOCATION, api_endpoint=emulator.address,
                    credentials=Credentials(token=emulator.token),
                    staging_bucket=STAGING_BUCKET)
    try:
        yield
    finally:
        # The SDK keeps its settings in a module global: leave none behind for other tests.
        aiplatform.initializer.global_config.__init__()


class StagingUploads:
    """The Cloud Storage JSON API's object uploads (multipart and media), written to the
    emulator's bucket folders; STORAGE_EMULATOR_HOST points Google's storage client here."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.uploaded: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                url = urlparse(self.path)
                parts = url.path.split("/")
                query = parse_qs(url.query)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if parts[:5] != ["", "upload", "storage", "v1", "b"] or len(parts) < 7:
                    self.send_error(404, f"not an object upload: {url.path}")
                    return
                bucket = parts[5]
                kind = query.get("uploadType", [""])[0]
                if kind == "media":
                    name, data = query["name"][0], body
                elif kind == "multipart":
                    name, data = _multipart(self.headers["Content-Type"], body)
                else:
                    self.send_error(400, f"uploadType {kind!r}: only media and multipart")
                    return
                target = Path(local_path(owner.data_dir, f"gs://{bucket}/{name}"))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
                owner.uploaded.append(f"gs://{bucket}/{name}")
                reply = json.dumps({"kind": "storage#object", "bucket": bucket, "name": name,
                                    "size": str(len(data)), "generation": "1"}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def host(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> StagingUploads:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _multipart(content_type: str, body: bytes) -> tuple[str, bytes]:
    """(object name, its bytes) of a multipart/related upload: JSON metadata, then the data."""
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    metadata, media = list(message.iter_parts())[:2]
    return json.loads(metadata.get_content())["name"], media.get_payload(decode=True)
