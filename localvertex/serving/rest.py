"""PredictionService's REST methods over HTTPS, as a dedicated endpoint serves them: POST
/v1/projects/P/locations/L/endpoints/E:rawPredict and :predict.

Why: Google's SDK sends Endpoint.raw_predict (and predict with use_dedicated_endpoint=True)
over HTTPS REST, not gRPC: `https://{endpoint.dedicated_endpoint_dns}/v1/{name}:rawPredict`,
through google.auth's AuthorizedSession (requests). The emulator gives a dedicated endpoint
this listener's address, 127.0.0.1:PORT, as its dedicated_endpoint_dns (Vertex gives a DNS
name; the SDK only formats it into that URL), so a user's script runs unchanged. Without a
dedicated endpoint the SDK posts to the fixed host {location}-aiplatform.googleapis.com, which
no local emulator can be: a script for the emulator creates its endpoint with
dedicated_endpoint_enabled=True.

TLS: a self-signed certificate for 127.0.0.1 and localhost, made once into the data dir (its
key owner-only) and kept, so a client can trust it (REQUESTS_CA_BUNDLE=DATA_DIR/https_cert.pem
for the SDK). Each call carries the emulator's bearer token (auth.py), as every gRPC call
does; without it, or with another, the answer is 401 in Google's JSON error shape, for a
known path or not (nothing to learn by guessing); an unknown path is 404. The work is the
gRPC PredictionService's own (predictions.py): RawPredict answers the model server's body and
content type, Predict Vertex's JSON of PredictResponse.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import logging
import os
import re
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import grpc
from google.api import httpbody_pb2
from google.protobuf import json_format

from localvertex import auth
from localvertex.core.errors import ApiError
from localvertex.serving.predictions import PredictionService, PredictRequest, RawPredictRequest

log = logging.getLogger(__name__)

CERT_FILE = "https_cert.pem"
KEY_FILE = "https_key.pem"
DEPLOYED_MODEL_HEADER = "X-Vertex-AI-Deployed-Model-Id"
# Vertex takes at most 1.5 MB per online prediction request; a little more is read, so an
# oversized body gets Vertex's refusal from the checks below rather than a cut connection.
_MAX_BODY = 10 * 1024 * 1024
_PATH = re.compile(
    r"^/v1/(projects/[^/:?#]+/locations/[^/:?#]+/endpoints/[^/:?#]+):(rawPredict|predict)$")
# google.rpc.Code -> HTTP status, as Google's REST APIs map them (google/rpc/code.proto).
_HTTP_STATUS = {
    grpc.StatusCode.INVALID_ARGUMENT: 400, grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.OUT_OF_RANGE: 400, grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403, grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409, grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429, grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNIMPLEMENTED: 501, grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}


def certificate(data_dir: Path) -> tuple[Path, Path]:
    """(certificate, key) in DATA_DIR, made on first use: self-signed, for 127.0.0.1, ::1 and
    localhost, ten years; the key readable by its owner alone."""
    cert_path, key_path = data_dir / CERT_FILE, data_dir / KEY_FILE
    if cert_path.exists() and key_path.exists():
        return cert_path, key_path
    # Imported here: only a first start makes a certificate.
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localvertex")])
    start = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)
    public = key.public_key()
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(start).not_valid_after(start + datetime.timedelta(days=3650))
        .add_extension(x509.SubjectAlternativeName([
            x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("::1"))]), critical=False)
        # Its own trust anchor: the client's CA bundle names this certificate itself.
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(
            digital_signature=True, key_cert_sign=True, content_commitment=False,
            key_encipherment=False, data_encipherment=False, key_agreement=False,
            crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]),
                       critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public),
                       critical=False)
        .sign(key, hashes.SHA256())
    )
    pem_key = key.private_bytes(serialization.Encoding.PEM,
                                serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    # The key first and owner-only from its creation; the certificate last, so a half-made
    # pair (a crash between) is made again on the next start.
    key_path.unlink(missing_ok=True)
    descriptor = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as out:
        out.write(pem_key)
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


class _Context:
    """What predictions.py's handlers use of a gRPC context: the metadata they set."""

    def __init__(self) -> None:
        self.metadata: dict[str, str] = {}

    def set_trailing_metadata(self, pairs) -> None:
        self.metadata.update(pairs)

    send_initial_metadata = set_trailing_metadata


class RestListener(ThreadingHTTPServer):
    """The HTTPS port; `predictions` is set once the serving half is wired (wiring.py)."""

    daemon_threads = True
    block_on_close = False

    def __init__(self, data_dir: Path, host: str, port: int, token: str) -> None:
        super().__init__((host, port), Handler)
        self.cert_path, key_path = certificate(data_dir)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert_path, key_path)
        # The handshake happens in the connection's own thread, on its first read: a client
        # that never finishes one holds no other caller up.
        self.socket = context.wrap_socket(self.socket, server_side=True,
                                          do_handshake_on_connect=False)
        self.token = token
        self.predictions: PredictionService | None = None
        self._thread: threading.Thread | None = None
        wildcard = host in ("", "0.0.0.0", "::")
        # What an endpoint's dedicated_endpoint_dns says; the certificate names 127.0.0.1.
        self.address = f"{'127.0.0.1' if wildcard else host}:{self.server_address[1]}"

    def start(self) -> None:
        self._thread = threading.Thread(target=self.serve_forever, args=(0.1,),
                                        name="https", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:  # (shutdown() waits for a serve_forever that never began)
            self.shutdown()
            self._thread = None
        self.server_close()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    # A connection idle this long (or a handshake never finished) is closed.
    timeout = 300
    server: RestListener

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("https: " + format, *args)

    def do_POST(self) -> None:
        if not self._authorized():
            return
        match = _PATH.match(self.path)
        length = self.headers.get("Content-Length")
        if match is None:
            self._error(404, "NOT_FOUND", f"The requested URL {self.path} was not found.")
            return
        if length is None or not length.isdigit():
            self._error(411, "INVALID_ARGUMENT", "The request needs a Content-Length.")
            return
        if int(length) > _MAX_BODY:
            self._error(413, "INVALID_ARGUMENT",
                        f"The request body is {length} bytes; at most {_MAX_BODY} are read.")
            return
        body = self.rfile.read(int(length))
        endpoint, method = match.groups()
        try:
            if method == "rawPredict":
                self._raw_predict(endpoint, body)
            else:
                self._predict(endpoint, body)
        except ApiError as exc:
            self._error(_HTTP_STATUS.get(exc.code, 500), exc.code.name, exc.message)
        except Exception:
            log.exception("https %s failed", method)
            self._error(500, "INTERNAL", f"Internal error in {method}.")

    def _unknown(self) -> None:
        if self._authorized():
            self._error(404, "NOT_FOUND", f"The requested URL {self.path} was not found.")

    do_GET = do_PUT = do_PATCH = do_DELETE = _unknown

    def _authorized(self) -> bool:
        if auth.matches(self.headers.get(auth.HEADER), self.server.token):
            return True
        self._error(401, "UNAUTHENTICATED", auth.REFUSED)
        return False

    def _raw_predict(self, endpoint: str, body: bytes) -> None:
        request = RawPredictRequest(endpoint=endpoint, http_body=httpbody_pb2.HttpBody(
            content_type=self.headers.get("Content-Type", "application/json"), data=body))
        context = _Context()
        answer = self._service().raw_predict(request, context)
        self._answer(200, answer.content_type or "application/json", answer.data, context)

    def _predict(self, endpoint: str, body: bytes) -> None:
        request = PredictRequest()
        try:
            json_format.Parse(body or b"{}", request)
        except (json_format.ParseError, UnicodeDecodeError) as exc:
            raise ApiError(grpc.StatusCode.INVALID_ARGUMENT,
                           f"Invalid JSON payload received. {exc}") from exc
        request.endpoint = endpoint
        context = _Context()
        response = self._service().predict(request, context)
        self._answer(200, "application/json",
                     json_format.MessageToJson(response).encode(), context)

    def _service(self) -> PredictionService:
        if self.server.predictions is None:
            raise ApiError(grpc.StatusCode.UNAVAILABLE, "The emulator is still starting.")
        return self.server.predictions

    def _error(self, status: int, code: str, message: str) -> None:
        """Google's JSON error body ({"error": {code, message, status}})."""
        body = json.dumps({"error": {"code": status, "message": message, "status": code}})
        self._answer(status, "application/json; charset=UTF-8", body.encode())

    def _answer(self, status: int, content_type: str, data: bytes,
                context: _Context | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        if status != 200:
            # A refused request's body may be unread: the connection cannot carry another.
            self.send_header("Connection", "close")
            self.close_connection = True
        deployed = (context.metadata if context else {}).get("x-vertex-ai-deployed-model-id")
        if deployed:
            self.send_header(DEPLOYED_MODEL_HEADER, deployed)
        self.end_headers()
        self.wfile.write(data)
