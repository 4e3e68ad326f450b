"""A job's door to the storage service: 127.0.0.1:<the service's port> inside the job's
network namespace, where its replicas' STORAGE_EMULATOR_HOST points (a deployment's model
servers get one in theirs the same way).

A job's replicas cannot reach the host's loopback (replicas/job_network.py), so the service's
own port, the control plane's, is out of their reach. Each job's namespace gets a listener of
the service's own instead, made inside it (job_network.socket_in) on the same port number as
the host's: the host holds that port, so no replica's port (picked free on the host) can be
it, and STORAGE_EMULATOR_HOST reads the same everywhere. Whatever connects through it is the
job's team (access.py), whichever process inside the namespace it is: they all run as the
team's user. The door closes with the job's namespace.

The emulator registers its service here by its data dir (one service per emulator, several
emulators per process in tests); a job of an emulator without one, or without a namespace
(the emulator is not root: replicas then share the host's network, run as one user and reach
the host's port, where nothing is walled, as the folders are not either), gets no door.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from localvertex.replicas import job_network
from localvertex.storage.access import Principal
from localvertex.storage.server import StorageServer, StorageService

log = logging.getLogger(__name__)

LOCALHOST = "127.0.0.1"

# A team's gs:// folders: the output folders of its jobs ('' = the unlabelled jobs').
TeamFolders = Callable[[str], Iterable[str]]

_services: dict[Path, tuple[StorageService, TeamFolders]] = {}
_lock = threading.Lock()


def register(data_dir: str | os.PathLike[str], service: StorageService,
             folders: TeamFolders) -> None:
    with _lock:
        _services[Path(data_dir).absolute()] = (service, folders)


def unregister(data_dir: str | os.PathLike[str]) -> None:
    with _lock:
        _services.pop(Path(data_dir).absolute(), None)


def principal(what: str, team: str, folders: TeamFolders) -> Principal:
    """WHAT (e.g. "job 12") of TEAM, as refusals name it."""
    who = f"team {team!r} ({what})" if team else f"unlabelled {what}"
    return Principal(who, lambda: folders(team))


class Door:
    def __init__(self, server: StorageServer) -> None:
        self.server = server
        server.serve_in_thread("storage-door")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def open_door(data_dir: str | os.PathLike[str], netns: Path | None, what: str,
              team: str) -> Door | None:
    """The door in NETNS of WHAT ("job 12", "deployment 3") of TEAM (see the module), or None
    where it gets none."""
    with _lock:
        found = _services.get(Path(data_dir).absolute())
    if found is None or netns is None:
        return None
    service, folders = found
    try:
        sock = job_network.socket_in(netns)
    except OSError as exc:
        log.warning("storage: no door for %s (%s): its gs:// calls will be refused", what, exc)
        return None
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((LOCALHOST, service.port))
        sock.listen(64)
    except OSError as exc:
        sock.close()
        # The job still runs (most never call Cloud Storage); one that does is refused a
        # connection, and the emulator's log says why.
        log.warning("storage: no door for %s (%s): its gs:// calls will be refused", what, exc)
        return None
    server = StorageServer(service, principal(what, team, folders))
    server.socket.close()
    server.socket = sock
    server.server_address = sock.getsockname()
    log.debug("storage: %s's door open in %s", what, netns.name)
    return Door(server)

