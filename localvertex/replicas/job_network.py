"""A network namespace of its own for each job: its replicas reach each other and nothing else.

On one machine every listener is on 127.0.0.1: the emulator's gRPC port, Redis (the control
plane's broker and live streams), other jobs' torch.distributed stores and model servers. A
job's code must reach none of them, yet its replicas must still meet on 127.0.0.1 as they
do today (CLUSTER_SPEC, MASTER_ADDR, JAX's coordinator). So every job gets a fresh network
namespace with only its loopback up, shared by all its replicas and by nothing else: `ip netns
add lv<data dir digest>-<job id>`, removed when the job's runner ends, and those of this
emulator's prefix left by an earlier one removed at start (remove_stale). Its replicas enter
it through `nsenter --net=` which then drops to the job's user (--setuid/--setgid, which also
drops supplementary groups): the namespace must be entered while still root, and Python's
subprocess only switches user before a preexec_fn runs (and a preexec_fn is unsafe in the
threaded emulator anyway, fork_safety.py).

A deployment's model servers get one the same way (serving/model_servers.py), and the
prediction service reaches them from the emulator through socket_in: a socket is made inside
the namespace by a thread that enters it, and keeps that namespace for its whole life.

Where no namespace can be made (the emulator is not root, or `ip` or `nsenter` is missing)
replicas share the host's network as before, and the emulator's log says so once.
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import os
import re
import shutil
import socket
import subprocess
import threading
from concurrent.futures import BrokenExecutor, ThreadPoolExecutor
from pathlib import Path

from localvertex.replicas.sandbox import Identity

log = logging.getLogger(__name__)

NETNS_DIR = Path("/run/netns")
_SAFE_ID = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_said_why: list[str] = []
_said_lock = threading.Lock()
# setns(2)'s flag for a network namespace (<sched.h>); Python 3.11's os has no setns.
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
# The thread of each namespace the emulator opens sockets in (socket_in).
_makers: dict[Path, ThreadPoolExecutor] = {}
_makers_lock = threading.Lock()


def prefix(data_dir: str | os.PathLike[str]) -> str:
    """This emulator's namespaces' names start with this: one data dir, one prefix, so
    emulators side by side (tests, two stacks) never remove each other's."""
    digest = hashlib.sha256(str(Path(data_dir).absolute()).encode()).hexdigest()[:8]
    return f"lv{digest}-"


def name_for(data_dir: str | os.PathLike[str], job_id: str) -> str:
    # An id the emulator made is digits; anything else is hashed, never used as a name.
    own = job_id if _SAFE_ID.match(job_id) else hashlib.sha256(job_id.encode()).hexdigest()[:16]
    return prefix(data_dir) + own


def _say_once(why: str) -> None:
    with _said_lock:
        if _said_why:
            return
        _said_why.append(why)
    log.warning("network: replicas share the host's network (%s): a job's code can reach "
                "every listener on 127.0.0.1", why)


def why_unavailable() -> str | None:
    """Why no namespace can be made here, or None when one can."""
    if os.geteuid() != 0:
        return "the emulator is not root"
    missing = [tool for tool in ("ip", "nsenter") if shutil.which(tool) is None]
    if missing:
        return f"no {' or '.join(missing)} on PATH"
    return None


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30,
                          check=False)


def create(data_dir: str | os.PathLike[str], job_id: str) -> Path | None:
    """A fresh namespace for the job, its loopback up; its path for nsenter, or None when
    the job runs in the host's network (said once in the log)."""
    why = why_unavailable() or (_said_why[0] if _said_why else None)
    if why is not None:  # (a failed `ip netns` fails the same way for the next job)
        _say_once(why)
        return None
    name = name_for(data_dir, job_id)
    _ip("netns", "delete", name)  # one an earlier runner of this job left (a restart)
    made = _ip("netns", "add", name)
    if made.returncode == 0:
        made = _ip("-n", name, "link", "set", "lo", "up")
    if made.returncode != 0:
        _ip("netns", "delete", name)
        _say_once(f"`ip netns` failed: {made.stderr.strip()[:200]}")
        return None
    return NETNS_DIR / name


def remove(path: Path | None) -> None:
    """Remove the job's namespace (what still runs in it keeps it until it exits), and the
    emulator's thread inside it, if any."""
    if path is None:
        return
    with _makers_lock:
        maker = _makers.pop(path, None)
    if maker is not None:
        maker.shutdown(wait=False)
    _ip("netns", "delete", path.name)


def remove_stale(data_dir: str | os.PathLike[str]) -> list[str]:
    """Remove the namespaces of this emulator's prefix (an earlier one's, whose jobs are
    resumed in fresh ones); the names removed."""
    if why_unavailable() is not None or not NETNS_DIR.is_dir():
        return []
    mine = prefix(data_dir)
    removed = []
    for entry in sorted(NETNS_DIR.iterdir()):
        if entry.name.startswith(mine) and _ip("netns", "delete", entry.name).returncode == 0:
            removed.append(entry.name)
    if removed:
        log.info("network: removed %d namespaces an earlier emulator left", len(removed))
    return removed


def entering(argv: list[str], netns: Path | None, who: Identity | None) -> list[str]:
    """The command line that runs ARGV inside NETNS as WHO (ARGV itself without a NETNS).
    nsenter execs ARGV in place: the replica keeps the pid the emulator started."""
    if netns is None:
        return argv
    user = ["--setgid", str(who.gid), "--setuid", str(who.uid)] if who is not None else []
    return [shutil.which("nsenter") or "nsenter", f"--net={netns}", *user, "--", *argv]


def _enter(netns: Path) -> None:
    """Move the calling thread (only it: setns(2) is per thread) into NETNS."""
    fd = os.open(netns, os.O_RDONLY | os.O_CLOEXEC)
    try:
        if _libc.setns(fd, _CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"cannot enter {netns}: {os.strerror(err)}")
    finally:
        os.close(fd)


def _maker(netns: Path) -> ThreadPoolExecutor:
    with _makers_lock:
        found = _makers.get(netns)
        if found is None:
            found = _makers[netns] = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix=f"netns-{netns.name}",
                initializer=_enter, initargs=(netns,))
        return found


def socket_in(netns: Path | None) -> socket.socket:
    """A TCP socket of NETNS (the host's without one), not yet connected: the caller connects
    it from any thread, and it reaches only what listens in that namespace.

    setns() moves only the calling thread, so one thread per namespace enters it once and
    makes its sockets (entering costs about a millisecond; a socket made by a thread already
    inside, a few microseconds and the hand-over); no other thread of the emulator's (a gRPC
    server's, say) ever leaves the host's network. remove() ends that thread."""
    if netns is None:
        return socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    maker = _maker(netns)
    try:
        return maker.submit(socket.socket, socket.AF_INET, socket.SOCK_STREAM).result()
    except (BrokenExecutor, RuntimeError) as exc:  # it could not enter; or removed meanwhile
        with _makers_lock:
            if _makers.get(netns) is maker:
                del _makers[netns]  # the next connection tries a fresh thread
        maker.shutdown(wait=False)
        raise OSError(f"cannot open a socket in {netns}: {exc}") from exc


def connect_in(netns: Path | None, address: tuple[str, int],
               timeout: float | None) -> socket.socket:
    """socket.create_connection's part http.client uses, to ADDRESS inside NETNS."""
    sock = socket_in(netns)
    try:
        sock.settimeout(timeout)
        sock.connect(address)
    except OSError:
        sock.close()
        raise
    return sock
