"""Replicas as an unprivileged sandbox: what a submitted command may see of the host.

Whatever a team submits runs here, so a replica gets

* an environment of its own: only the variables a training process needs pass from the
  emulator's (PATH, locale, Python's, the accelerator libraries'); the rest (database URLs,
  secret keys, broker addresses, cloud credentials) never reach it;
* its own working directory, ``<data-dir>/work/<job id>/``;
* with a replica user (``--replica-user``, or LOCALVERTEX_REPLICA_USER; the default when the
  emulator runs as root is ``localvertex-replica``, created if missing, and let through -
  not list - the private folders above the interpreter: localvertex/replicas/traverse.py), another
  uid and gid
  with no supplementary groups and umask 027: it cannot read files only their owner may
  (the control plane's database and secret key, the emulator's own state), nor another
  process's environment (/proc/<pid>/environ). The emulator's data directory is then
  traversable but not listable, its state file private, and the folders replicas write
  (a job's output folder, its working directory) belong to the job's user: a team's own
  (team_users.py) when the control plane labelled the job with one, this one otherwise;
  output_folders.py says who owns what in the stand-in buckets;
* its job's own network namespace (job_network.py): loopback only, shared by its replicas.

Without root (a developer's own account), the uid cannot change: the environment and the
working directory are still the replica's own, and the emulator says so at start. As root it
never falls back to running replicas as root: a replica user it cannot use stops it at start
(SandboxError), unless '' asks for root, which the start line says loudly.
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

from localvertex.replicas.traverse import interpreter_paths, let_through

log = logging.getLogger(__name__)

DEFAULT_USER = "localvertex-replica"
ENV_USER = "LOCALVERTEX_REPLICA_USER"
# What a training process needs from the host's environment; nothing else passes.
_PASSED = re.compile(
    r"^(PATH|HOME|LANG|LANGUAGE|LC_[A-Z]+|TZ|TMPDIR|TERM|PYTHON[A-Z_]*|VIRTUAL_ENV"
    r"|OMP_.*|MKL_.*|OPENBLAS_.*|CUDA_.*|NVIDIA_.*|NCCL_.*|GLOO_.*|TORCH.*|PYTORCH_.*|DS_.*"
    r"|XLA_.*|JAX_.*|TPU_.*|HF_.*|TOKENIZERS_.*|TRAINERS_.*|FAKE_GCS_ROOT)$"
)

# Compile caches torch names in its own process's environment for its children, once it has
# compiled anything: folders of the host's user, where a replica user cannot write. A replica
# finds its own, as a container on Vertex does.
_HOST_CACHES = frozenset({"TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR"})


# What a replica writes is its own (and, in its job's output folder, readable by that folder's
# group: the sandbox's user, which serves a team's model; output_folders.py), nobody else's.
REPLICA_UMASK = 0o027


def replica_environment(inherited: dict[str, str]) -> dict[str, str]:
    """The part of the emulator's environment a replica may see."""
    return {k: v for k, v in inherited.items() if _PASSED.match(k) and k not in _HOST_CACHES}


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


class SandboxError(RuntimeError):
    """Replicas cannot run as an unprivileged user as the emulator was asked: it does not start
    (the message says why, and how to run replicas as root knowingly)."""


def can_run_python(who: Identity) -> tuple[bool, str]:
    """Whether `who` can start the emulator's Python (which `python` in a command means), and
    what the attempt said when it cannot."""
    try:
        done = subprocess.run([sys.executable, "-c", ""], user=who.uid, group=who.gid,
                              extra_groups=[], capture_output=True, timeout=60, cwd="/")
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    return done.returncode == 0, done.stderr.decode(errors="replace").strip()[-300:]


def _runs_python(who: Identity) -> None:
    """Make sure `who` can start the emulator's Python: let it pass (not list) the private
    folders on the interpreter's path (localvertex/replicas/traverse.py), or raise SandboxError."""
    ok, said = can_run_python(who)
    if ok:
        return
    try:
        granted = let_through(who.uid, who.gid, interpreter_paths())
    except OSError as exc:
        raise SandboxError(f"replica user {who.name} cannot run {sys.executable} ({said}), and "
                           f"could not be let through the folders above it: {exc}. "
                           f"{_HOW_TO_OPT_OUT}") from exc
    for folder in granted:
        log.warning("sandbox: replica user %s may now pass through %s (ACL user:%s:--x; it "
                    "cannot list it) to start %s", who.name, folder, who.name, sys.executable)
    ok, said = can_run_python(who)
    if not ok:
        raise SandboxError(f"replica user {who.name} cannot run {sys.executable}: {said or '?'}"
                           f". Install Python where other users can run it. {_HOW_TO_OPT_OUT}")


_HOW_TO_OPT_OUT = ("To run replicas as the emulator's own user (root: every job may read "
                   "every file on this host) say so with --replica-user '' or "
                   f"{ENV_USER}=''.")


def identity(requested: str | None = None) -> Identity | None:
    """Who replicas run as, or None when they run as the emulator's own user.

    As root, by default the dedicated user (created if missing, and let through the private
    folders above the interpreter); a user asked for by name likewise. Never root by
    accident: when that user cannot be used, SandboxError, and the emulator does not start.
    Only '' (asked for) runs replicas as root, and the start says so loudly."""
    name = requested if requested is not None else os.environ.get(ENV_USER)
    root = os.geteuid() == 0
    if name == "":
        if root:
            log.warning("sandbox: NOT SANDBOXED - replicas run as root, as asked "
                        "(--replica-user ''): every job may read every file on this host")
        return None
    if not root:
        if name:
            log.warning("sandbox: replica user %s asked for, but the emulator is not root: "
                        "replicas run as the emulator's own user", name)
        return None
    return usable_user(name or DEFAULT_USER)


def usable_user(name: str) -> Identity:
    """NAME as a replica user (root only): created if missing, let through the folders above
    the interpreter; SandboxError when it cannot be (a root account, no useradd)."""
    found = _ensure_user(name)
    if found is None:
        raise SandboxError(f"cannot use or create the replica user {name} (a root account, "
                           f"or no useradd here). {_HOW_TO_OPT_OUT}")
    _runs_python(found)
    return found


def describe(who: Identity | None) -> str:
    """The one line the emulator says at start about who runs replicas (devstack shows it)."""
    if who is not None:
        return (f"sandbox: replicas run as user {who.name} (uid {who.uid}), in their own "
                "working directory, with a filtered environment")
    if os.geteuid() == 0:
        return ("sandbox: NOT SANDBOXED - replicas run as root (asked for): only their "
                "environment is filtered")
    return (f"sandbox: replicas run as the emulator's own user (uid {os.geteuid()}), in "
            "their own working directory, with a filtered environment; start the emulator "
            "as root to run them as a user of their own")


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
    # Both the emulator's: each job's working folder in work/ and each output folder in a
    # bucket is its team's own (working_dir, output_folders.py); in gcs/ any replica may make
    # a bucket folder, none may list, rename or remove another's (sticky, as /tmp).
    for name, mode in (("gcs", 0o1733), ("work", 0o711)):
        (data_dir / name).mkdir(exist_ok=True)
        os.chown(data_dir / name, 0, 0)
        os.chmod(data_dir / name, mode)
    for child in data_dir.iterdir():
        if child.is_file():
            os.chmod(child, 0o600)  # the emulator's state: every team's jobs
        elif child.name not in ("gcs", "work"):
            os.chmod(child, 0o700)


def working_dir(data_dir: Path, job_id: str, who: Identity | None) -> Path:
    path = data_dir / "work" / job_id
    _own(path, who, 0o700)
    return path


def popen_options(who: Identity | None) -> dict[str, Any]:
    """subprocess.Popen arguments that start a replica as `who`."""
    if who is None:
        return {}
    return {"user": who.uid, "group": who.gid, "extra_groups": [], "umask": REPLICA_UMASK}
