"""A pythonPackageSpec's packages, made importable for the replica that runs its module.

On Vertex the prebuilt executor image pip-installs each of ``package_uris`` and runs
``python -m <python_module> <args>``. Locally a ``gs://`` URI is a file under the data folder
(see storage.py) and nothing is installed: a source distribution is unpacked once per job and
its root (and its ``src/`` folder, for the src layout) goes on PYTHONPATH; a wheel or zip goes
on PYTHONPATH as it is (zipimport reads pure-Python wheels); a folder is used in place. That is
enough for the training packages Vertex's samples build (``setup.py`` + ``trainer/task.py``).
"""

from __future__ import annotations

import tarfile
from collections.abc import Iterable
from pathlib import Path

from localvertex.config import Settings
from localvertex.replicas.storage import local_path

_SDIST_SUFFIXES = (".tar.gz", ".tgz", ".tar")
_ZIP_SUFFIXES = (".whl", ".zip", ".egg")


def import_paths(settings: Settings, job_id: str, package_uris: Iterable[str]) -> list[str]:
    """The PYTHONPATH entries that make the packages importable, in the order given.

    A URI that names nothing local adds nothing: the module then fails to import, and the
    replica exits with Python's own error, as a missing package fails a Vertex replica."""
    paths: list[str] = []
    for index, uri in enumerate(package_uris):
        try:
            local = Path(local_path(settings.data_dir, uri))
        except ValueError:
            continue
        if local.is_dir():
            paths += _roots(local)
        elif local.is_file() and local.name.endswith(_ZIP_SUFFIXES):
            paths.append(str(local.absolute()))
        elif local.is_file() and local.name.endswith(_SDIST_SUFFIXES):
            # In the job's working folder (sandbox.py), which its replicas may read; the
            # emulator's own jobs folder is private to it.
            target = settings.data_dir / "work" / job_id / "packages" / str(index)
            paths += _roots(_unpack(local, target))
    return paths


def _unpack(archive: Path, target: Path) -> Path:
    """The sdist unpacked under ``target`` (once: restarts reuse it)."""
    if not target.exists():
        partial = target.with_name(target.name + ".partial")
        partial.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            # The "data" filter refuses absolute names, links out of the folder and devices.
            tar.extractall(partial, filter="data")
        partial.rename(target)
    return target


def _roots(folder: Path) -> list[str]:
    """The folders to import from: a project root (the sdist's single top folder), its src/."""
    children = [c for c in folder.iterdir() if c.is_dir()] if folder.is_dir() else []
    if len(children) == 1 and not (folder / "setup.py").exists() \
            and not (folder / "pyproject.toml").exists() and not (folder / "__init__.py").exists():
        folder = children[0]
    roots = [str(folder.absolute())]
    if (folder / "src").is_dir():
        roots.append(str((folder / "src").absolute()))
    return roots
