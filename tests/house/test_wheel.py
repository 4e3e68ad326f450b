"""The package as the image installs it: build the wheel from what Docker would send as the
build context (the repository less .dockerignore), install it into a fresh virtualenv and run
Django from there, away from the source tree. A template, static file, data file or subpackage
that pyproject.toml does not ship fails here instead of in a container.

The new virtualenv borrows the dependencies of the one running the tests through `.pth` lines
(plain path entries: the `.pth` files in those directories, the editable install's finder among
them, are not executed), so only this project comes from the wheel and nothing is downloaded.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest

from tests.house.packaging import PACKAGES, ROOT, dockerignore_patterns, dockerignored

# Left out of `make test-fast` (the inner loop): builds and installs the wheel.
pytestmark = pytest.mark.slow

# Local junk that may sit in a working tree and is rightly not shipped.
NOT_SHIPPED = ("__pycache__", "*.py[cod]", ".*", "*~", "*.swp", "*.orig", "*.rej")


def build_context(target: Path) -> Path:
    patterns = dockerignore_patterns()

    def ignore(directory: str, names: list[str]) -> set[str]:
        base = PurePosixPath(Path(directory).relative_to(ROOT).as_posix())
        return {name for name in names if dockerignored(base / name, patterns)}

    shutil.copytree(ROOT, target, ignore=ignore, symlinks=True)
    return target


def run(argv: list[str], **kwargs) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, text=True, capture_output=True, timeout=300, **kwargs)
    assert result.returncode == 0, (
        f"{' '.join(map(str, argv))[:300]} exited {result.returncode}\n"
        f"--- stdout\n{result.stdout[-4000:]}\n--- stderr\n{result.stderr[-6000:]}")
    return result


@dataclass(frozen=True)
class Installed:
    python: Path
    site_packages: Path
    workdir: Path
    env: dict[str, str]

    def python_run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        # cwd is outside the repository, so neither it nor the source tree is on sys.path.
        return run([str(self.python), *args], cwd=self.workdir, env=self.env, input=stdin)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    tmp = tmp_path_factory.mktemp("wheel")
    context = build_context(tmp / "context")
    wheels = tmp / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "--disable-pip-version-check", "-q", "-w", str(wheels), str(context)])
    [wheel] = wheels.glob("*.whl")

    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)])
    python = venv / "bin" / "python"
    run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--disable-pip-version-check", "-q", str(wheel)])
    site_packages = Path(run([str(python), "-c",
                              "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             cwd=tmp).stdout.strip())
    # The environment's own folders, and those its .pth files add (make venv keeps the
    # dependencies in a folder of the machine's environment cache): never the source tree.
    added = [entry for entry in sys.path if entry and Path(entry).is_dir()
             and not Path(entry).resolve().is_relative_to(ROOT)
             and not Path(entry).resolve().is_relative_to(Path(sys.base_prefix).resolve())]
    borrowed = dict.fromkeys([sysconfig.get_path("purelib"), sysconfig.get_path("platlib"),
                              *added])
    (site_packages / "zz_test_dependencies.pth").write_text("".join(f"{p}\n" for p in borrowed))

    workdir = tmp / "run"
    workdir.mkdir()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PYTHON", "DJANGO_", "CP_", "VIRTUAL_ENV", "DATABASE_URL",
                                "CELERY_", "SECRET_KEY"))}
    env.update({
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
        "CP_VAR_DIR": str(workdir / "var"),
        "CELERY_BROKER_URL": "memory://",
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    return Installed(python, site_packages.resolve(), workdir, env)


def repo_files(kind: str) -> list[str]:
    """Paths of the files in the packages' `kind` directories (templates, jinja2, static),
    relative to those directories: the names Django looks them up by."""
    names = set()
    for package in PACKAGES:
        for directory in (ROOT / package).rglob(kind):
            if directory.is_dir() and "__pycache__" not in directory.parts:
                names.update(p.relative_to(directory).as_posix()
                             for p in directory.rglob("*") if p.is_file() and not shipped_junk(p))
    return sorted(names)


def shipped_junk(path: Path) -> bool:
    return any(fnmatch.fnmatchcase(part, pattern)
               for part in path.parts for pattern in NOT_SHIPPED)


def test_every_file_of_the_packages_is_in_the_wheel(installed: Installed) -> None:
    missing = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*")):
            rel = path.relative_to(ROOT)
            if (path.is_file() and not shipped_junk(rel)
                    and not (installed.site_packages / rel).is_file()):
                missing.append(rel.as_posix())
    assert not missing, f"not installed from the wheel (pyproject.toml package-data?): {missing}"


PROBE = r"""
import importlib, json, sys
import django
django.setup()
from django.conf import settings
from django.contrib.staticfiles import finders
from django.template.loader import get_template
from django.urls import get_resolver

spec = json.load(sys.stdin)
for name in [*settings.INSTALLED_APPS, settings.ROOT_URLCONF, "config.wsgi", "config.asgi",
             "config.celery", "localvertex", "trainers", "contract.events", "contract.labels",
             "contract.quota_metrics", "contract.prediction"]:
    importlib.import_module(name)
get_resolver().url_patterns  # imports every view

from vertexplan.catalog import get_catalog
from vertexplan.interop import to_python
from vertexplan.pricing import default_table

catalog = get_catalog()
out = {
    "modules": {name: getattr(module, "__file__", None) for name, module in sys.modules.items()
                if name.split(".")[0] in spec["packages"]},
    "templates": {name: get_template(name).origin.name for name in spec["templates"]},
    "static": {name: finders.find(name) for name in spec["static"]},
    "catalog": {"machines": len(catalog.machines), "regions": len(catalog.regions),
                "accelerators": len(catalog.accelerators)},
    "prices": len(default_table().rows),
    "snippet": to_python({"displayName": "x"}, region="us-central1", project="p"),
}
print(json.dumps(out))
"""


def test_django_runs_from_the_installed_package(installed: Installed) -> None:
    # get_template looks in both engines' directories: Django's templates/ and Jinja2's jinja2/.
    templates, static = repo_files("templates") + repo_files("jinja2"), repo_files("static")
    assert "base.html" in templates and "css/app.css" in static
    assert "runs/fragments/job_rows.html" in templates
    assert any(name.startswith("vendor/") and name.endswith(".js") for name in static)
    spec = {"packages": PACKAGES, "templates": templates, "static": static}
    out = json.loads(installed.python_run("-c", PROBE, stdin=json.dumps(spec)).stdout)

    inside = str(installed.site_packages) + os.sep
    assert {"config", "controlplane.core", "vertexplan", "contract.events", "localvertex",
            "trainers"} <= set(out["modules"])
    elsewhere = {name: file for name, file in out["modules"].items()
                 if file is not None and not str(Path(file).resolve()).startswith(inside)}
    assert not elsewhere, f"imported from outside the installed wheel: {elsewhere}"
    for kind in ("templates", "static"):
        for name, path in out[kind].items():
            assert path, f"{kind[:-1]} {name} not found from the installed package"
            assert str(Path(path).resolve()).startswith(inside), f"{name} found at {path}"
    assert min(out["catalog"].values()) > 0, out["catalog"]
    assert out["prices"] > 0
    assert "aiplatform" in out["snippet"]


def test_check_and_migrate_succeed_from_the_installed_package(installed: Installed) -> None:
    installed.python_run("-m", "django", "check")
    installed.python_run("-m", "django", "migrate", "--noinput", "-v", "0")
    assert (installed.workdir / "db.sqlite3").is_file()
    assert (installed.workdir / "var" / "staticfiles").is_dir(), "CP_VAR_DIR was not used"
