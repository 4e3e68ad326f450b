"""A port of the host's loopback that leads to the same port inside a network namespace.

A Ray cluster's nodes run in a namespace of their own (clusters/ray_nodes.py), as a job's
replicas do, so nothing of another team's (a job, a model server, another cluster's Ray job)
reaches their GCS, raylets or agents. Two of their ports must still answer the control plane,
which runs on the host: the dashboard (its Job Submission API) and the Ray client server. The
emulator opens each on the host's 127.0.0.1 under the same number and copies every connection
to it into the namespace (a socket made there, job_network.socket_in), so the addresses Vertex
reports (access_uris) are the ones Ray itself sees. Every other team's process runs in a
namespace of its own and cannot reach the host's loopback at all; Ray's token authentication
then checks who asks.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from pathlib import Path

from localvertex.replicas import job_network
from localvertex.replicas.environment import LOCALHOST

log = logging.getLogger(__name__)

_CHUNK = 64 * 1024
_CONNECT_TIMEOUT_S = 10.0


class Forwarder:
    """127.0.0.1:PORT on the host -> 127.0.0.1:PORT in NETNS, until close()."""

    def __init__(self, netns: Path, port: int) -> None:
        self.netns = netns
        self.port = port
        self._listener = socket.create_server((LOCALHOST, port))
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._closed = False
        threading.Thread(target=self._accept, name=f"forward-{port}", daemon=True).start()

    def close(self) -> None:
        """Stop listening and cut every connection still open."""
        with self._lock:
            self._closed = True
            held, self._open = self._open, set()
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes accept()
        self._listener.close()
        for sock in held:
            _cut(sock)

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._carry, args=(client,), name=f"forward-{self.port}",
                             daemon=True).start()

    def _hold(self, *socks: socket.socket) -> bool:
        with self._lock:
            if self._closed:
                return False
            self._open.update(socks)
            return True

    def _carry(self, client: socket.socket) -> None:
        try:
            inside = job_network.connect_in(self.netns, (LOCALHOST, self.port),
                                            _CONNECT_TIMEOUT_S)
        except OSError as exc:
            log.debug("forward %d: %s", self.port, exc)
            _cut(client)
            return
        inside.settimeout(None)
        if not self._hold(client, inside):
            _cut(client)
            _cut(inside)
            return
        back = threading.Thread(target=_copy, args=(inside, client), daemon=True)
        back.start()
        _copy(client, inside)
        back.join()
        with self._lock:
            self._open.discard(client)
            self._open.discard(inside)
        _cut(client)
        _cut(inside)


def _copy(source: socket.socket, sink: socket.socket) -> None:
    """Bytes from SOURCE to SINK until SOURCE ends; then SINK hears the end too."""
    try:
        while data := source.recv(_CHUNK):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def _cut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
