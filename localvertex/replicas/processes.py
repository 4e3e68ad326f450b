"""Process groups of replicas: signalling them, and finding ones an earlier emulator left behind.

Each replica is started in its own session (so its own process group, whose id is its pid): a
signal to the group reaches whatever the replica started too (torchrun's workers, a shell's
children), as stopping a container would.
"""

from __future__ import annotations

import logging
import os
import signal
from pathlib import Path

from localvertex.replicas.environment import ENV_DATA_DIR, ENV_JOB_ID, ENV_TASK

log = logging.getLogger(__name__)


def signal_group(pgid: int, sig: int) -> bool:
    """Send `sig` to a process group; False if nothing in it is left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        log.warning("not allowed to signal process group %d", pgid)
        return False
    return True


def _environ(pid: int) -> dict[str, str] | None:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return None
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode(errors="replace")] = value.decode(errors="replace")
    return env


def find_strays(data_dir: str | os.PathLike[str]) -> list[tuple[int, str, str]]:
    """(pid, job_id, task_name) of every live process started for a replica of this data dir.

    Replicas carry LOCALVERTEX_DATA_DIR / _JOB_ID / _TASK in their environment, and their
    children inherit it, so this finds orphans whose replica has already died. Linux only
    (reads /proc); elsewhere it finds nothing.
    """
    wanted = str(Path(data_dir).absolute())
    me = os.getpid()
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        env = _environ(int(entry.name))
        if env and env.get(ENV_DATA_DIR) == wanted:
            found.append((int(entry.name), env.get(ENV_JOB_ID, ""), env.get(ENV_TASK, "")))
    return found


def kill_strays(data_dir: str | os.PathLike[str]) -> int:
    """SIGKILL every process find_strays() reports; the number killed."""
    killed = 0
    for pid, job_id, task in find_strays(data_dir):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            continue
        killed += 1
        log.info("killed stray process %d of job %s replica %s", pid, job_id, task)
    return killed
