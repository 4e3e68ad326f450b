"""The HTTP side of Vertex AI's custom-container contract.

    GET  AIP_HEALTH_ROUTE   200 once the model is loaded (Vertex sends traffic only then)
    POST AIP_PREDICT_ROUTE  {"instances": [...], "parameters": {...}} -> {"predictions": [...]}

A malformed request is a 400 with {"error": message}; a failure of the model a 500. Threads
serve connections (HTTP/1.1 keep-alive, as Vertex's front ends keep connections open) and hand
the instances to the batcher, so concurrent requests share forward passes.
"""

from __future__ import annotations

import json
import logging
from concurrent.futures import TimeoutError as FutureTimeout
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from contract.prediction import BadInstance, parse_instances
from trainers.serving.batcher import Batcher

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 4 * 1024 * 1024
REQUEST_TIMEOUT_S = 120.0


class PredictionServer(ThreadingHTTPServer):
    daemon_threads = True
    # Many clients connect at once under load; the default backlog of 5 refuses some.
    request_queue_size = 128

    def __init__(
        self,
        address: tuple[str, int],
        batcher: Batcher[Any],
        health_route: str,
        predict_route: str,
        info: dict[str, Any],
    ) -> None:
        self.batcher = batcher
        self.health_route = health_route
        self.predict_route = predict_route
        self.info = info
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    server: PredictionServer
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes; with Nagle on, the body waits for the client's
    # delayed ACK of the headers (40 ms on Linux) on a kept-alive connection.
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass  # no access log: a prober's every request would fill the replica's log

    def _path(self) -> str:
        return self.path.split("?", 1)[0]

    def do_GET(self) -> None:
        if self._path() == self.server.health_route:
            self._reply(HTTPStatus.OK, {"status": "ok", **self.server.info})
        else:
            self._reply(HTTPStatus.NOT_FOUND, {"error": f"no route {self._path()}"})

    def do_POST(self) -> None:
        if self._path() != self.server.predict_route:
            self._drain()
            self._reply(HTTPStatus.NOT_FOUND, {"error": f"no route {self._path()}"})
            return
        try:
            body = self._json_body()
            instances = parse_instances(body.get("instances"), body.get("parameters"))
        except BadInstance as exc:
            self._reply(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
            return
        future = self.server.batcher.submit(instances)
        try:
            predictions = future.result(timeout=REQUEST_TIMEOUT_S)
        except FutureTimeout:
            self._reply(HTTPStatus.SERVICE_UNAVAILABLE, {"error": "prediction timed out"})
            return
        except Exception as exc:
            self._reply(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"prediction failed: {exc}"})
            return
        self._reply(HTTPStatus.OK, {"predictions": predictions})

    def _drain(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if 0 < length <= MAX_BODY_BYTES:
            self.rfile.read(length)

    def _json_body(self) -> dict[str, Any]:
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError as exc:
            raise BadInstance("bad Content-Length") from exc
        if length <= 0:
            raise BadInstance("the request has no body")
        if length > MAX_BODY_BYTES:
            self.close_connection = True  # the body is not read: the connection is unusable
            raise BadInstance(f"the body is over {MAX_BODY_BYTES} bytes")
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw)
        except ValueError as exc:
            raise BadInstance(f"the body is not JSON: {exc}") from exc
        if not isinstance(body, dict):
            raise BadInstance('the body must be an object: {"instances": [...]}')
        return body

    def _reply(self, status: HTTPStatus, payload: dict[str, Any]) -> None:
        data = json.dumps(payload, separators=(",", ":")).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
