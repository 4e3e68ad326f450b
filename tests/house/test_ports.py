"""The tests' servers get ports nobody else takes (config/ports.py), and a stack whose web port
another server answers on says so at once (config/devstack.py)."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from config import ports
from config.devstack import Stack, StackConfig
from config.ports import reserve_port

ROOT = Path(__file__).resolve().parents[2]


def test_a_port_is_below_the_ephemeral_range_and_never_given_twice_in_a_process() -> None:
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    taken = [reserve_port() for _ in range(20)]
    assert len(set(taken)) == 20
    assert all(ports.LOWEST <= port < low for port in taken)


def test_two_processes_reserving_at_once_never_share_a_port() -> None:
    # Both start their search at the same port, so only the locks keep them apart; each
    # holds its ports until its stdin closes.
    script = ("import sys; sys.path.insert(0, sys.argv[1]); from config import ports;"
              "ports.random.randrange = lambda count: 0;"
              "print(*[ports.reserve_port() for _ in range(300)]); sys.stdout.flush();"
              "sys.stdin.read()")
    procs = [subprocess.Popen([sys.executable, "-c", script, str(ROOT)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        taken = [set(map(int, p.stdout.readline().split())) for p in procs]  # type: ignore[union-attr]
    finally:
        for p in procs:
            p.communicate("", timeout=30)
    assert all(len(t) == 300 for t in taken)
    assert not taken[0] & taken[1]
    assert all(p.returncode == 0 for p in procs)


def test_a_port_something_listens_on_is_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        busy = server.getsockname()[1]
        server.listen()
        monkeypatch.setattr(ports, "LOWEST", busy)
        monkeypatch.setattr(ports, "_highest", lambda: busy + 999)
        monkeypatch.setattr(ports.random, "randrange", lambda count: 0)
        got = reserve_port()
    assert busy < got <= busy + 999


@pytest.fixture
def foreign_server() -> Iterator[int]:
    """A server that answers every connection with bytes that are not HTTP (as a gRPC server's
    first frame is not)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()

    def answer() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(1024)
                conn.sendall(b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x04\x00@\x00\x00\r\n")

    threading.Thread(target=answer, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


def test_a_web_port_another_server_answers_on_fails_the_start_at_once(
        foreign_server: int, tmp_path: Path) -> None:
    stack = Stack(StackConfig(var_dir=tmp_path, database_url="sqlite:///unused",
                              broker_url="memory://", web_port=foreign_server))
    with pytest.raises(RuntimeError, match="something other than the web server answers"):
        stack.wait_web(timeout_s=60)
