"""The torch extensions a replica finds already built, as a team's image ships its ops prebuilt.

DeepSpeed builds its CPU communication op (deepspeed_shm_comm) with torch's JIT loader the
first time a process initializes it with none built (290 s measured on this 2-core machine
while other tests ran; about 90 s idle, by an earlier note), in the replica's HOME, which is
its job's own folder: every DeepSpeed job would pay it. A team's container on Vertex has its
ops built into the image (`DS_BUILD_OPS=1`); here the environment is the image: `make ds-ops`
builds the op once per environment into PREBUILT (`<the environment>/torch-extensions`, since
its build file names the environment's own paths), and each job's replicas get a copy of it as
their TORCH_EXTENSIONS_DIR, in the job's folder and owned by its user (torch's loader takes a
lock file beside the build and runs ninja there, which finds it up to date: a shared read-only
folder is refused with a PermissionError). Without PREBUILT, replicas build as before.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import threading
from pathlib import Path

from localvertex.replicas.sandbox import Identity

log = logging.getLogger(__name__)

ENV = "TORCH_EXTENSIONS_DIR"
PREBUILT = Path(sys.prefix) / "torch-extensions"
FOLDER = "torch-extensions"
# Replicas of one job start together: one of them copies.
_lock = threading.Lock()


def for_replica(workdir: Path, who: Identity | None, prebuilt: Path = PREBUILT
                ) -> dict[str, str]:
    """The environment that points a replica of the job whose folder is WORKDIR at its copy of
    the prebuilt extensions (made on the job's first replica); {} when none are built, or
    when the copy fails (the replica then builds what it needs, as without them). A job that
    names its own TORCH_EXTENSIONS_DIR keeps it (its environment is applied after this)."""
    if not (prebuilt / ".built").is_file():
        return {}
    target = workdir / FOLDER
    with _lock:
        if not target.exists():
            try:
                _copy(prebuilt, workdir / (FOLDER + ".partial"), target, who)
            except OSError as exc:
                log.warning("prebuilt torch extensions not copied to %s: %s", target, exc)
                return {}
    return {ENV: str(target)}


def _copy(prebuilt: Path, partial: Path, target: Path, who: Identity | None) -> None:
    shutil.rmtree(partial, ignore_errors=True)
    # copy2 keeps the files' times: ninja finds the outputs newer than the sources.
    shutil.copytree(prebuilt, partial, copy_function=shutil.copy2, symlinks=False)
    if who is not None:
        for folder, _, files in os.walk(partial):
            os.chown(folder, who.uid, who.gid)
            for name in files:
                os.chown(os.path.join(folder, name), who.uid, who.gid)
    partial.rename(target)
