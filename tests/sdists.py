"""A source distribution written from text, as a team's python package job ships its code
(`python setup.py sdist` would make the same gzipped tar of files)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path


def write_sdist(path: Path, files: dict[str, str]) -> None:
    """`files`: {path inside the archive (under its "name-version/" folder): text}."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
