"""A clone's virtual environment over the dependencies installed once per machine (`make venv`).

The project's dependencies (torch, jax, ray, DeepSpeed, Django and the rest: about 3 GB) are
installed once per machine into a folder of the environment cache named by the hash of their
pinned list, as the PyTorch/XLA and Triton environments are. A clone's `.venv` is a small
virtual environment that adds that folder to its path (a .pth file, so the folder's own .pth
files are read too) and has the project installed editable without dependencies: a fresh clone
is ready in seconds instead of the minutes pip takes to unpack those gigabytes again (about 2.5
minutes of `make test` on two cores).

Run with the system's Python, before the environment has anything (standard library only):
    python3 config/deps_venv.py requirements > FILE        the pinned list (pyproject's)
    python3 config/deps_venv.py link VENV PACKAGES          the .pth file and the scripts

`pip install --target` writes the packages' scripts into PACKAGES/bin with the installing
Python's path in their first line; `link` writes each into VENV/bin with the environment's own
Python instead (so `celery`, `gunicorn`, `schemathesis` import the clone's project), and links
the scripts that are not Python's (ruff is a binary).
"""

from __future__ import annotations

import os
import sys
import tomllib
from pathlib import Path

EXTRAS = ("trainers", "jax", "ray", "dev")
# The environment's own: never replaced by the cache's copies.
KEEP = ("python", "pip", "activate", "Activate", "deactivate")


def requirements(pyproject: Path) -> list[str]:
    """The project's dependencies and those of the extras `make venv` installs, as pip reads
    them (their versions are pinned by constraints.txt)."""
    project = tomllib.loads(pyproject.read_text())["project"]
    extras = project.get("optional-dependencies", {})
    return list(project.get("dependencies", [])) + [
        requirement for extra in EXTRAS for requirement in extras.get(extra, [])]


def link(venv: Path, packages: Path) -> None:
    python = venv / "bin" / "python"
    # A virtual environment's own (Debian's Python would name its dist-packages instead).
    purelib = next((venv / "lib").glob("python3*/site-packages"))
    (purelib / "deps-packages.pth").write_text(
        f"import site; site.addsitedir({str(packages)!r})\n")
    scripts = packages / "bin"
    for source in sorted(scripts.iterdir()) if scripts.is_dir() else ():
        if source.name.startswith(KEEP) or source.is_dir():
            continue
        target = venv / "bin" / source.name
        if target.is_symlink() or target.exists():
            target.unlink()
        head = source.read_bytes()[:2]
        if head == b"#!":
            first, _, rest = source.read_text().partition("\n")
            if "python" in first:
                target.write_text(f"#!{python.absolute()}\n{rest}")
                target.chmod(0o755)
                continue
        os.symlink(source, target)


def main(argv: list[str]) -> int:
    if argv[:1] == ["requirements"] and len(argv) == 1:
        print("\n".join(requirements(Path("pyproject.toml"))))
        return 0
    if argv[:1] == ["link"] and len(argv) == 3:
        link(Path(argv[1]), Path(argv[2]).resolve())
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
