"""Replicas as an unprivileged sandbox: what a submitted command may see of the host.

Whatever a team submits runs here, so a replica gets

* an environment of its own: only the variables a training process needs pass from the
  emulator's (PATH, locale, Python's, the accelerator libraries'); the rest (database URLs,
  secret keys, broker addresses, cloud credentials) never reach it;
* its own working directory, ``<data-dir>/work/<job id>/``;
* with a replica user (``--replica-user``, or LOCALVERTEX_REPLICA_USER; the default when the
  emulator runs as root is ``localvertex-replica``, created if missing), another uid and gid
  with no supplementary groups and umask 077: it cannot read files only their owner may
  (the control plane's database and secret key, the emulator's own state), nor another
  process's environment (/proc/<pid>/environ). The emulator's data directory is then
  traversable but not listable, its state file private, and the folders replicas write
  (the stand-in buckets, the working directories) belong to the replica user.

Without root (a developer's own account), the uid cannot change: the environment and the
working directory are still the replica's own, and the emulator says so at start.
"""

from __future__ import annotations

import logging
import os
import pwd
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_USER = "localvertex-replica"
ENV_USER = "LOCALVERTEX_REPLICA_USER"
# What a training process needs from the host's environment; nothing else passes.
_PASSED = re.compile(
    r"^(PATH|HOME|LANG|LANGUAGE|LC_[A-Z]+|TZ|TMPDIR|TERM|PYTHON[A-Z_]*|VIRTUAL_ENV"
    r"|OMP_.*|MKL_.*|OPENBLAS_.*|CUDA_.*|NVIDIA_.*|NCCL_.*|GLOO_.*|TORCH.*|PYTORCH_.*|DS_.*"
    r"|XLA_.*|JAX_.*|TPU_.*|HF_.*|TOKENIZERS_.*|TRAINERS_.*|FAKE_GCS_ROOT)$"
)


def replica_environment(inherited: dict[str, str]) -> dict[str, str]:
    """The part of the emulator's environment a replica may see."""
    return {k: v for k, v in inherited.items() if _PASSED.match(k)}


@dataclass(frozen=True)
class Identity:
    uid: int
    gid: int
    name: str


def _ensure_user(name: str) -> Identity | None:
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        if os.geteuid() != 0 or not shutil.which("useradd"):
            return None
        subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                        "--shell", "/usr/sbin/nologin", "--user-group", name],
                       check=False, capture_output=True, timeout=30)
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            return None
    if entry.pw_uid == 0:
        return None  # never "sandbox" as root
    return Identity(uid=entry.pw_uid, gid=entry.pw_gid, name=name)


def can_run_python(who: Identity) -> bool:
    """Whether `who` can start the emulator's Python (which `python` in a command means)."""
    try:
        done = subprocess.run([sys.executable, "-c", ""], user=who.uid, group=who.gid,
                              extra_groups=[], capture_output=True, timeout=60, cwd="/")
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def identity(requested: str | None = None) -> Identity | None:
    """Who replicas run as, or None when they run as the emulator's own user.

    By default (no user asked for, the emulator root) the dedicated user, unless it cannot
    start the emulator's Python (an interpreter in a private home folder): then replicas run
    as the emulator's user, and the log says why. A user asked for by name is used as asked."""
    name = requested if requested is not None else os.environ.get(ENV_USER)
    if name == "":
        return None
    by_default = name is None
    if name is None:
        if os.geteuid() != 0:
            return None
        name = DEFAULT_USER
    if os.geteuid() != 0:
        log.warning("replica user %s asked for, but the emulator is not root: replicas run "
                    "as the emulator's own user (environment and working directory still "
                    "their own)", name)
        return None
    found = _ensure_user(name)
    if found is None:
        log.warning("cannot use replica user %s: replicas run as the emulator's user", name)
    elif by_default and not can_run_python(found):
        log.warning("replica user %s cannot run %s (a folder above it is private): replicas "
                    "run as the emulator's user; install Python where others can run it, or "
                    "name the user with --replica-user to use it anyway", name, sys.executable)
        return None
    return found


def _own(path: Path, who: Identity | None, mode: int) -> None:
    path.mkdir(parents=True, exist_ok=True)
    if who is not None:
        os.chown(path, who.uid, who.gid)
    os.chmod(path, mode)


def prepare(data_dir: Path, who: Identity | None) -> None:
    """Modes and owners of the data directory for sandboxed replicas (idempotent)."""
    if who is None:
        return
    data_dir.mkdir(parents=True, exist_ok=True)
    # Traversable (replicas reach their folders) but not listable or readable; so are the
    # folders above it (a private temporary folder, say), which gain only "x" for others.
    os.chmod(data_dir, 0o711)
    for parent in data_dir.parents:
        mode = parent.stat().st_mode
        if not mode & 0o001:
            log.info("letting replicas pass through %s (o+x, not listable)", parent)
            os.chmod(parent, (mode & 0o7777) | 0o001)
    for name in ("gcs", "work"):
        _own(data_dir / name, who, 0o755)
    for child in data_dir.iterdir():
        if child.is_file():
            os.chmod(child, 0o600)  # the emulator's state: every team's jobs
        elif child.name not in ("gcs", "work"):
            os.chmod(child, 0o700)
    # The bucket folders made before (by an earlier emulator as root) become the replicas'.
    for root, dirs, files in os.walk(data_dir / "gcs"):
        for name in dirs + files:
            os.chown(os.path.join(root, name), who.uid, who.gid, follow_symlinks=False)


def replica_folder(path: Path, who: Identity | None) -> None:
    """A folder replicas write (a job's output folders in a stand-in bucket), made with its
    missing parents as the replica user's: made as the emulator's root, a trainer could not
    create its checkpoints there."""
    missing = [p for p in (path, *path.parents) if not p.exists()]
    path.mkdir(parents=True, exist_ok=True)
    if who is not None:
        for made in missing:
            os.chown(made, who.uid, who.gid)


def working_dir(data_dir: Path, job_id: str, who: Identity | None) -> Path:
    path = data_dir / "work" / job_id
    _own(path, who, 0o700)
    return path


def popen_options(who: Identity | None) -> dict[str, Any]:
    """subprocess.Popen arguments that start a replica as `who`."""
    if who is None:
        return {}
    return {"user": who.uid, "group": who.gid, "extra_groups": [], "umask": 0o077}
