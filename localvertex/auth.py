"""The emulator's credential: a bearer token only the control plane and the emulator hold.

On Vertex every call carries Google's credentials; here every call to the emulator's gRPC
server and to its admin service carries `authorization: Bearer <token>` (the metadata
Google's call credentials send), and a call without it, or with another, is refused
UNAUTHENTICATED with the same words either way. The token lives in a file readable by its
owner only (`<data dir>/auth_token` unless `--token-file` names another), made on the
emulator's first start; the control plane reads it through VERTEX_EMULATOR_TOKEN_FILE.
Replicas, model servers and Ray nodes never get it (replicas/sandbox.py passes them only
what a training process needs), so a team's code cannot list, cancel or fault anyone's jobs.

A Ray cluster's own token (Ray's token authentication, clusters/ray_nodes.py) is derived
from this one and the cluster's name and dashboard address: the control plane computes it
to reach the dashboard as Vertex's proxy would let it, the cluster's nodes hold only
their own, and no cluster's token tells anything of another's or of this one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

import grpc

TOKEN_FILE = "auth_token"
HEADER = "authorization"
SCHEME = "Bearer "
# Said alike to a caller without a token and to one with a wrong token: nothing to guess by.
REFUSED = "The request does not have valid authentication credentials."


class TokenError(RuntimeError):
    """The token file cannot be made or read, or holds no token."""


def load_or_create(path: Path) -> str:
    """The token in PATH, written there first (owner-only, 0600) when the file is missing."""
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read(path)
    except OSError as exc:
        raise TokenError(f"cannot create the token file {path}: {exc.strerror}") from exc
    with os.fdopen(descriptor, "w") as out:
        out.write(secrets.token_urlsafe(32))
    return read(path)


def read(path: Path) -> str:
    """The token in PATH (a file its owner alone may read: one that others could is refused)."""
    try:
        if path.stat().st_mode & 0o077:
            raise TokenError(f"the token file {path} is readable by others: chmod 600 it")
        token = path.read_text().strip()
    except OSError as exc:
        raise TokenError(f"cannot read the token file {path}: {exc.strerror}") from exc
    if not token:
        raise TokenError(f"the token file {path} is empty")
    return token


def matches(presented: str | None, token: str) -> bool:
    """Whether an `authorization` value is this token's, compared in constant time."""
    return hmac.compare_digest((presented or "").encode(), f"{SCHEME}{token}".encode())


class TokenCheck(grpc.ServerInterceptor):
    """Refuses every call whose metadata does not carry the token, before any handler runs."""

    def __init__(self, token: str) -> None:
        self._token = token

    def intercept_service(self, continuation, handler_call_details):
        presented = next((value for key, value in handler_call_details.invocation_metadata
                          if key == HEADER), None)
        if matches(presented, self._token):
            return continuation(handler_call_details)
        # A refusal of the method's own kind, so a stream is answered as a stream; an unknown
        # method is refused the same way, so a guesser learns no method names.
        handler = continuation(handler_call_details)
        return _refusal(handler.request_streaming if handler else False,
                        handler.response_streaming if handler else False)


def _refusal(request_streaming: bool, response_streaming: bool) -> grpc.RpcMethodHandler:
    def refuse(request, context: grpc.ServicerContext):
        context.abort(grpc.StatusCode.UNAUTHENTICATED, REFUSED)

    if request_streaming and response_streaming:
        return grpc.stream_stream_rpc_method_handler(refuse)
    if request_streaming:
        return grpc.stream_unary_rpc_method_handler(refuse)
    if response_streaming:
        return grpc.unary_stream_rpc_method_handler(refuse)
    return grpc.unary_unary_rpc_method_handler(refuse)


class _Bearer(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor,
              grpc.StreamUnaryClientInterceptor, grpc.StreamStreamClientInterceptor):
    """Adds the token to every call's metadata (what Google's call credentials do on TLS; the
    emulator's channel is plaintext, where gRPC sends no call credentials, and may cross a
    container network, where local credentials do not apply)."""

    def __init__(self, token: str) -> None:
        self._pair = (HEADER, f"{SCHEME}{token}")

    def _with_token(self, details: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        metadata = [pair for pair in (details.metadata or ()) if pair[0] != HEADER]
        return _CallDetails(details.method, details.timeout, [*metadata, self._pair],
                            details.credentials, details.wait_for_ready, details.compression)

    def intercept_unary_unary(self, continuation, details, request):
        return continuation(self._with_token(details), request)

    def intercept_unary_stream(self, continuation, details, request):
        return continuation(self._with_token(details), request)

    def intercept_stream_unary(self, continuation, details, requests):
        return continuation(self._with_token(details), requests)

    def intercept_stream_stream(self, continuation, details, requests):
        return continuation(self._with_token(details), requests)


class _CallDetails(grpc.ClientCallDetails):
    def __init__(self, method, timeout, metadata, credentials, wait_for_ready, compression):
        self.method = method
        self.timeout = timeout
        self.metadata = metadata
        self.credentials = credentials
        self.wait_for_ready = wait_for_ready
        self.compression = compression


def channel(address: str, token: str) -> grpc.Channel:
    """A plaintext channel to the emulator at ADDRESS whose every call carries TOKEN."""
    return grpc.intercept_channel(grpc.insecure_channel(address), _Bearer(token))


def ray_token(token: str, resource_name: str, dashboard: str) -> str:
    """The Ray token of the cluster of RESOURCE_NAME whose dashboard is at DASHBOARD: one
    cluster's, never another's (a cluster started again gets a new dashboard port)."""
    message = f"ray\0{resource_name}\0{dashboard}".encode()
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()
