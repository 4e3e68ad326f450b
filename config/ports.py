"""Ports for the servers tests and benchmarks start, which nothing else on the machine takes.

A port found by binding port 0 and closing the socket is free only for that instant: it lies in
the kernel's ephemeral range, from which every outgoing connection and every other bind to port
0 (Ray's and gRPC's servers, torch's rendezvous, another stack's emulator) draws too. A CI run
once gave a stack's web server a port on which, by the time gunicorn started, a gRPC server
already listened, and every test on that stack failed on a reply that was not HTTP.

So ports come from below the ephemeral range (and above Ray's worker ports, 10002-19999 by
default), where the kernel never hands one out by itself; and each is held, for as long as the
process that asked lives, by a lock on one byte of a file shared by every process of the
machine (POSIX record locks end with their process, however it ends), so two test processes, or
two runs, never take the same one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import random
import socket
import tempfile
from pathlib import Path

# Above Ray's default worker ports (10002-19999), below Linux's default ephemeral range.
LOWEST = 20000
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")

_lock_file: int | None = None
_held: set[int] = set()


def _highest() -> int:
    """The last port below the ephemeral range (32767 with Linux's default range)."""
    try:
        low = int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    return max(low - 1, LOWEST + 999)


def _locks() -> int:
    global _lock_file
    if _lock_file is None:
        path = Path(tempfile.gettempdir()) / "vertex-control-plane-ports.lock"
        # Shared by every user of the machine who runs a stack: readable and writable by all
        # (a lock file holds nothing), whatever the umask of the first to make it.
        _lock_file = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        with contextlib.suppress(OSError):  # made by another user: theirs to set
            os.fchmod(_lock_file, 0o666)
    return _lock_file


def _bindable(port: int) -> bool:
    """Whether a server could listen on 127.0.0.1:PORT now (with SO_REUSEADDR, as servers
    bind: a connection of an earlier holder left in TIME_WAIT does not keep it)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def reserve_port() -> int:
    """A port on 127.0.0.1 that no other process of the machine has reserved, that nothing
    listens on now, and that the kernel gives to no one else by itself; this process holds it
    until it exits."""
    lowest, highest = LOWEST, _highest()
    count = highest - lowest + 1
    start = random.randrange(count)
    locks = _locks()
    for offset in range(count):
        port = lowest + (start + offset) % count
        if port in _held:
            continue
        try:
            fcntl.lockf(locks, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, port)
        except OSError:
            continue  # another process holds it
        if _bindable(port):
            _held.add(port)
            return port
        fcntl.lockf(locks, fcntl.LOCK_UN, 1, port)
    raise RuntimeError(f"no port free between {lowest} and {highest} on 127.0.0.1")
