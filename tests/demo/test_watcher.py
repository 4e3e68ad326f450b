"""`make demo`'s watcher keeps the stack up whatever its reads of the sample job meet: refused
(429, 500, 503), slower than its timeout, cut off, or not JSON. A stand-in server answers a
hundred such reads before the job's real answer; only that answer ends the watch."""

from __future__ import annotations

import argparse
import http.server
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from config import demo

BAD_READS = 100
DONE = {"state": "SUCCEEDED", "last_step": 12, "restarts": 1, "error_message": "",
        "attempt": 2, "attempts": []}


class StandIn(http.server.BaseHTTPRequestHandler):
    reads = 0
    auth: list[str] = []

    def do_GET(self) -> None:
        cls = type(self)
        cls.reads += 1
        cls.auth.append(self.headers.get("Authorization", ""))
        bad = cls.reads <= BAD_READS
        kind = cls.reads % 5
        if bad and kind == 0:
            self._answer(429, b'{"detail": "slow down"}')
        elif bad and kind == 1:
            self._answer(500, b"<html>oops</html>")
        elif bad and kind == 2:
            time.sleep(0.3)  # slower than the watcher waits (0.05 s)
            self._answer(200, json.dumps(DONE).encode())
        elif bad and kind == 3:
            self._answer(200, b"not json")
        elif bad:
            self.close_connection = True
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 999\r\n\r\n{")
        else:
            self._answer(200, json.dumps(DONE).encode())

    def _answer(self, status: int, body: bytes) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the watcher gave up on this one

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    StandIn.reads, StandIn.auth = 0, []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_hundred_failed_reads_do_not_end_the_watch(server: str, capsys: Any) -> None:
    stack = SimpleNamespace(web_url=server, dead=dict)
    args = argparse.Namespace(no_preemption=True, exit_when_done=True, timeout=300, steps=12,
                              poll=0.0, api_timeout=0.05)
    assert demo.watch(stack, {"job": 7, "token": "t0k"}, args) == 0  # type: ignore[arg-type]
    assert StandIn.reads > BAD_READS
    assert set(StandIn.auth) == {"Token t0k"}
    said = capsys.readouterr()
    assert "sample job 7: SUCCEEDED after 12 steps and 1 restart(s)" in said.out
    for trouble in ("HTTP 429", "HTTP 500", "timed out", "JSONDecodeError"):
        assert trouble in said.err, said.err[-2000:]


def test_a_restart_reuses_the_sample_job_and_its_token(server: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    seeded_runs: list[tuple[str, ...]] = []

    class Stand:
        web_url = server
        config = SimpleNamespace(var_dir=tmp_path)

        def manage(self, *command: str, capture: bool = False) -> str:
            seeded_runs.append(command)
            return json.dumps({"username": "demo", "password": "p", "team": "demo",
                               "token": f"token-{len(seeded_runs)}", "job": 40 + len(seeded_runs)})

    StandIn.reads = BAD_READS  # the stand-in answers the job at once
    args = argparse.Namespace(steps=12, api_timeout=5.0)
    first = demo.seed(Stand(), args)  # type: ignore[arg-type]
    again = demo.seed(Stand(), args)  # type: ignore[arg-type]
    assert len(seeded_runs) == 1 and again == first
    assert (first["job"], first["token"]) == (41, "token-1")
    assert (tmp_path / demo.SEEDED).stat().st_mode & 0o777 == 0o600
    # Asked for other steps, the kept job is not the one asked for: a new one is seeded.
    assert demo.seed(Stand(), argparse.Namespace(steps=30, api_timeout=5.0))["job"] == 42
