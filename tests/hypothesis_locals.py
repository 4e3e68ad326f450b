"""Hypothesis reads the project's constants only, not its dependencies'.

Hypothesis mixes the string and number constants of the modules it takes for the project's own
("local": not under a site-packages folder, nor the standard library's) into what it generates,
reading each such module's source the first time a property test runs after the module was
imported. The dependencies are installed in a folder of the environment cache that the
environment's .pth file adds to the path (config/deps_venv.py), which is not a site-packages
folder, so Hypothesis took every dependency for the project: measured on 2 cores, about 15 s of
each test process's collection (Django, DRF, Celery, schemathesis...) and 26 s more in a process
that had imported torch and transformers, in each run of a fresh clone. Told where installed
packages are, it reads the project's modules only, as it would in an ordinary environment.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from hypothesis.internal import scrutineer

# A dependency every test process imports, to find the folder the dependencies are in.
_INSTALLED = "django"


def installed_packages() -> Path:
    spec = importlib.util.find_spec(_INSTALLED)
    assert spec is not None and spec.origin is not None, f"{_INSTALLED} is not installed"
    return Path(spec.origin).resolve().parent.parent


def pytest_configure() -> None:
    # Hypothesis' own list of installed-package folders (the interpreter's purelib and platlib),
    # read on each module's first look; the looks are cached, so any made before this goes.
    scrutineer.SITE_PACKAGES_DIRS.add(installed_packages())
    scrutineer.ModuleLocation.from_path.cache_clear()
