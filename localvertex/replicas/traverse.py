"""Letting the replica user start the emulator's Python when it lives in a private folder.

An interpreter under a home folder of mode 0700 (pyenv in /root, say) is out of reach of every
other user. Rather than run replicas as root, the sandbox grants the replica user the right to
pass through (execute, `--x`: not list, not read) exactly the folders on the interpreter's
path that it cannot pass through yet, with a POSIX access ACL entry `user:<uid>:--x`, written
through the kernel's own interface (the `system.posix_acl_access` extended attribute), so no
`setfacl` needs to be installed. Nothing else changes: the folder's owner, mode for everyone
else and other ACL entries stay as they were. What the replica user reaches through such a
folder is only what it names exactly and what is itself readable by others (the interpreter,
its standard library) - never a listing of the folder.

Where the file system keeps no ACLs the grant fails with a clear reason, and the sandbox
refuses to start rather than run replicas as root (localvertex/replicas/sandbox.py).
"""

from __future__ import annotations

import os
import stat
import struct
import sys
import sysconfig
from collections.abc import Iterable
from pathlib import Path

XATTR = "system.posix_acl_access"
_VERSION = 2
# Entry tags (linux/posix_acl.h), in the order the kernel requires them.
USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_UNDEFINED_ID = 0xFFFFFFFF
_EXECUTE = 0o1
_ENTRY = struct.Struct("<HHI")


class GrantError(OSError):
    """A folder the replica user could not be let through (why is in the message)."""


def interpreter_paths() -> list[Path]:
    """Every file and folder starting the emulator's Python touches by name: each link from
    sys.executable to the real binary, the prefixes, and the standard library's folders."""
    paths: list[Path] = []
    link = Path(sys.executable)
    for _ in range(40):  # a chain of links, as a virtual environment's bin/python is
        paths.append(link)
        if not link.is_symlink():
            break
        link = (link.parent / os.readlink(link))
    paths.append(Path(sys.executable).resolve())
    paths += [Path(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix,
                                sys.base_exec_prefix)]
    paths += [Path(p) for p in sysconfig.get_paths().values()]
    paths += [Path(p) for p in sys.path if p]
    return [p for p in dict.fromkeys(paths) if p.is_absolute()]


def folders_on(paths: Iterable[Path]) -> list[Path]:
    """The folders a process passes through to reach PATHS (each path's parents, and the path
    itself when it is a folder), outermost first, without duplicates."""
    found: dict[Path, None] = {}
    for path in paths:
        chain = list(reversed(path.parents))
        if path.is_dir() and not path.is_symlink():
            chain.append(path)
        for folder in chain:
            found.setdefault(folder, None)
    return sorted(found, key=lambda p: (len(p.parts), str(p)))


def can_pass(folder: Path, uid: int, gid: int) -> bool:
    """Whether UID (group GID, no other groups) may pass through FOLDER by its mode bits, or
    an ACL entry of its own."""
    info = folder.stat()
    if uid == info.st_uid:
        return bool(info.st_mode & stat.S_IXUSR)
    entries = _read(folder, info.st_mode)
    named = [p for tag, p, i in entries if tag == USER and i == uid]
    if named:
        mask = next((p for tag, p, _ in entries if tag == MASK), 0o7)
        return bool(named[0] & mask & _EXECUTE)
    if gid == info.st_gid:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def _read(folder: Path, mode: int) -> list[tuple[int, int, int]]:
    try:
        raw = os.getxattr(folder, XATTR)
    except OSError:
        # No ACL (or none kept here): the one the mode bits stand for.
        return [(USER_OBJ, (mode >> 6) & 7, _UNDEFINED_ID),
                (GROUP_OBJ, (mode >> 3) & 7, _UNDEFINED_ID),
                (OTHER, mode & 7, _UNDEFINED_ID)]
    (version,) = struct.unpack_from("<I", raw)
    if version != _VERSION:
        raise GrantError(f"{folder}: an ACL of unknown version {version}")
    return [_ENTRY.unpack_from(raw, offset) for offset in range(4, len(raw), _ENTRY.size)]


def grant_pass(folder: Path, uid: int) -> None:
    """Add `user:UID:--x` to FOLDER's access ACL (and widen its mask by execute only)."""
    current = _read(folder, folder.stat().st_mode)
    had = next((p for tag, p, i in current if tag == USER and i == uid), 0)
    entries = [e for e in current if not (e[0] == USER and e[2] == uid)]
    entries.append((USER, had | _EXECUTE, uid))
    masks = [p for tag, p, _ in entries if tag == MASK]
    entries = [e for e in entries if e[0] != MASK]
    if masks:  # (named entries masked out of execute before gain it too: rare, and only x)
        mask = masks[0] | _EXECUTE
    else:  # a first named entry needs a mask: what the group class had, and execute
        mask = _EXECUTE | next(p for tag, p, _ in entries if tag == GROUP_OBJ)
    entries.append((MASK, mask, _UNDEFINED_ID))
    entries.sort(key=lambda e: (e[0], e[2]))
    raw = struct.pack("<I", _VERSION) + b"".join(_ENTRY.pack(*e) for e in entries)
    try:
        os.setxattr(folder, XATTR, raw)
    except OSError as exc:
        raise GrantError(exc.errno, f"cannot add an ACL entry to {folder} ({exc.strerror}); "
                         "its file system may not keep POSIX ACLs") from exc


def let_through(uid: int, gid: int, paths: Iterable[Path]) -> list[Path]:
    """Grant UID passage through each folder on PATHS it cannot pass yet; the folders granted."""
    granted = []
    for folder in folders_on(paths):
        if folder.is_dir() and not can_pass(folder, uid, gid):
            grant_pass(folder, uid)
            granted.append(folder)
    return granted
