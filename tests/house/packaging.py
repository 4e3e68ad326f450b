"""How the project is shipped: the wheel, the images' Dockerfiles and docker-compose.yml."""

from __future__ import annotations

import fnmatch
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[2]
# The top-level packages pyproject.toml ships ([tool.setuptools.packages.find]).
PACKAGES = ("config", "controlplane", "vertexplan", "contract", "localvertex", "trainers")


def dockerignore_patterns() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    assert not any(p.startswith("!") for p in patterns), "exceptions are not modelled here"
    return patterns


def dockerignored(rel: PurePosixPath, patterns: list[str]) -> bool:
    """Docker's rules for the patterns .dockerignore uses: `**/x` matches x at any depth,
    anything else matches the path from the build context's root."""
    for pattern in patterns:
        if pattern.startswith("**/"):
            if fnmatch.fnmatchcase(rel.name, pattern[3:]):
                return True
        elif fnmatch.fnmatchcase(str(rel), pattern.rstrip("/")):
            return True
    return False
