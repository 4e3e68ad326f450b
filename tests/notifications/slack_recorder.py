"""A local HTTP server that stands in for Slack and records what Slack would receive.

Webhook posts arrive at their path (/services/T../B../..), Web API calls at /api/<method>.
Answers can be scripted per path: a list of (status, body) used in turn, then 200 "ok".
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Received:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def text(self) -> str:
        return str(self.body.get("text", ""))


@dataclass
class SlackRecorder:
    server: ThreadingHTTPServer
    received: list[Received] = field(default_factory=list)
    scripts: dict[str, list[tuple[int, str, dict[str, str]]]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/"

    def answer(self, path: str, *answers: tuple[int, str] | tuple[int, str, dict[str, str]]
               ) -> None:
        """Script the next answers for `path` (then it answers 200 ok again)."""
        with self.lock:
            self.scripts.setdefault(path, []).extend(
                (a[0], a[1], a[2] if len(a) > 2 else {}) for a in answers)  # type: ignore[misc]

    def to(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.path == path]

    def clear(self) -> None:
        with self.lock:
            self.received.clear()
            self.scripts.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def start() -> SlackRecorder:
    recorder: SlackRecorder

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode()
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                body = {"_raw": raw}
            with recorder.lock:
                script = recorder.scripts.get(self.path) or []
                status, text, headers = script.pop(0) if script else (200, "", {})
                if status == 200 and self.path.startswith("/api/") and not text:
                    text = json.dumps({"ok": True, "channel": body.get("channel"), "ts": "1"})
                elif status == 200 and not text:
                    text = "ok"
                if status < 400 and not (self.path.startswith("/api/") and '"ok": false' in text):
                    recorder.received.append(Received(self.path, body, dict(self.headers)))
            payload = text.encode()
            self.send_response(status)
            is_json = text.startswith("{")
            self.send_header("Content-Type", "application/json" if is_json else "text/plain")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in headers.items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    recorder = SlackRecorder(server)
    threading.Thread(target=server.serve_forever, name="slack-recorder", daemon=True).start()
    return recorder
