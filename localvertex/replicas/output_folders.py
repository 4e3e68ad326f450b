"""A job's output folder in the stand-in buckets: its team's alone, the folders above it the
emulator's.

With the sandbox on (sandbox.py, the emulator is root), before a job's replicas start:

* the job's output folder (its base_output_directory's local folder) and the folders Vertex
  names in it (model/, checkpoints/, logs/) belong to the job's user (its team's,
  team_users.py), group the sandbox's user's, mode 2750: the team writes; the sandbox's user
  (model servers serve a team's model from there, Ray nodes run as it) may read; no other
  team's user may enter. The setgid bit gives what the team writes inside that group too, and
  its replicas' umask (027) leaves it readable by the group only.
* the folders above it (the bucket and its prefixes) belong to the emulator (root), mode 1733,
  as /tmp but not listable: any replica may make folders of its own in a bucket (a Ray job's,
  say); none may list a bucket, nor rename or remove what is not its own (the sticky bit), so
  no team can move another's output folder away or plant its own in its place.
* a folder on that path that some other user made (a team that squatted another team's
  future prefix, or an earlier emulator's shared replica user) is taken over: the output
  folder with everything in it becomes the job's user's, a folder above it the emulator's.

Every folder is opened one name at a time from the buckets' root without following links
(O_NOFOLLOW, relative to the parent's descriptor), so a link planted on the path is replaced by
a folder, never followed out of the buckets.

Without the sandbox the folders are made as the emulator's own, as before.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from localvertex.replicas.sandbox import Identity

log = logging.getLogger(__name__)

ABOVE_MODE = 0o1733
OUTPUT_MODE = 0o2750
_FILE_MODE, _EXECUTABLE_MODE = 0o640, 0o750
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


def prepare(data_dir: Path, root: Path, folders: Iterable[Path], who: Identity | None,
            reader: Identity | None) -> None:
    """Make ROOT (a job's output folder) and FOLDERS (inside it) the job's: WHO owns them,
    READER's group may read them (see the module's doc)."""
    root = Path(root).absolute()
    inside = [Path(f).absolute() for f in folders]
    buckets = (Path(data_dir) / "gcs").absolute()
    if who is None or reader is None or not root.is_relative_to(buckets) or root == buckets:
        for folder in (root, *inside):
            folder.mkdir(parents=True, exist_ok=True)
        return
    buckets.mkdir(parents=True, exist_ok=True)
    opened = [os.open(buckets, _DIR_FLAGS)]
    try:
        for name in root.relative_to(buckets).parts[:-1]:
            opened.append(_step(opened[-1], name, _emulators))
        owned = _step(opened[-1], root.name, lambda fd, made: _jobs(fd, made, who, reader))
        opened.append(owned)
        for folder in inside:
            if not folder.is_relative_to(root) or folder == root:
                continue
            here = owned
            for name in folder.relative_to(root).parts:
                here = _step(here, name, lambda fd, made: _jobs(fd, made, who, reader))
                opened.append(here)
    finally:
        for fd in opened:
            os.close(fd)


def _step(parent: int, name: str, settle: Callable[[int, bool], None]) -> int:
    """Open NAME in PARENT as a folder (made when missing; anything else there, a link, is
    replaced by one) and settle its owner and mode; its descriptor, for the caller to close."""
    made = False
    try:
        os.mkdir(name, 0o700, dir_fd=parent)
        made = True
    except FileExistsError:
        pass
    try:
        child = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):  # a file or a link, not a folder
            raise
        log.warning("output folders: replacing %r (not a folder) on a job's output path", name)
        os.unlink(name, dir_fd=parent)
        os.mkdir(name, 0o700, dir_fd=parent)
        made = True
        child = os.open(name, _DIR_FLAGS, dir_fd=parent)
    try:
        settle(child, made)
    except BaseException:
        os.close(child)
        raise
    return child


def _emulators(fd: int, made: bool) -> None:
    """A folder above a job's output folder: the emulator's, 1733; one that is already root's
    (made by hand or by a test) keeps its mode, with passage for others."""
    info = os.fstat(fd)
    if made or info.st_uid != 0:
        if not made:
            log.warning("output folders: taking over a folder above a job's output (uid %d)",
                        info.st_uid)
        os.fchown(fd, 0, 0)
        os.fchmod(fd, ABOVE_MODE)
    elif not info.st_mode & 0o001:
        os.fchmod(fd, stat.S_IMODE(info.st_mode) | 0o001)


def _jobs(fd: int, made: bool, who: Identity, reader: Identity) -> None:
    """The job's output folder or one Vertex names inside it."""
    info = os.fstat(fd)
    if not made and info.st_uid != who.uid:
        log.warning("output folders: taking over a job's output folder made by uid %d for %s",
                    info.st_uid, who.name)
        _take_over(fd, who.uid, reader.gid)
    os.fchown(fd, who.uid, reader.gid)
    os.fchmod(fd, OUTPUT_MODE)


def _take_over(top: int, uid: int, gid: int) -> None:
    """Everything inside TOP becomes UID's (group GID, no access for others), links included
    (as links: never followed)."""
    for _, dirs, files, dir_fd in os.fwalk(".", dir_fd=top, follow_symlinks=False):
        for name in dirs + files:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            if not (stat.S_ISDIR(info.st_mode) or stat.S_ISREG(info.st_mode)):
                os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
                continue
            flags = (_DIR_FLAGS if stat.S_ISDIR(info.st_mode)
                     else os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
            try:
                fd = os.open(name, flags, dir_fd=dir_fd)
            except OSError:  # swapped for a link meanwhile: as a link
                os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
                continue
            try:
                os.fchown(fd, uid, gid)
                if stat.S_ISDIR(info.st_mode):
                    os.fchmod(fd, OUTPUT_MODE)
                else:
                    os.fchmod(fd, _EXECUTABLE_MODE if info.st_mode & 0o100 else _FILE_MODE)
            finally:
                os.close(fd)
