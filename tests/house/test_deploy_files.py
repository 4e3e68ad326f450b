"""The files that ship the product but that nothing here builds: the two Dockerfiles,
.dockerignore and the compose file. Docker does not run on the test machines, so they are checked
as text: the rules a Dockerfile linter applies that matter here, that everything they copy
exists, that the control plane image installs the whole project as a package (so it cannot drift
from pyproject.toml: test_wheel.py checks what that package holds), that the trainer image's
command is one the trainer accepts, and that compose runs the dev stack's commands."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path, PurePosixPath

import pytest
import yaml

from config.devstack import Stack, StackConfig
from tests.house.packaging import PACKAGES, ROOT, dockerignore_patterns, dockerignored

DOCKERFILES = ["Dockerfile", "Dockerfile.trainer"]


def instructions(path: Path) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) per logical line: comments dropped, continuations joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        logical = pending + line
        pending = ""
        keyword, _, rest = logical.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    assert not pending, f"{path.name} ends inside a continued line"
    return out


def pinned_versions() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "constraints.txt").read_text().splitlines():
        name, sep, version = line.partition("==")
        if sep:
            pins[name.strip().lower().replace("_", "-")] = version.strip()
    return pins


def compose_services() -> dict[str, dict]:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert isinstance(compose, dict) and isinstance(compose.get("services"), dict)
    return compose["services"]


@pytest.mark.parametrize("name", DOCKERFILES)
def test_dockerfile_follows_the_linter_rules_that_matter(name: str) -> None:
    steps = instructions(ROOT / name)
    args = {}
    for keyword, rest in steps:
        if keyword == "ARG" and "=" in rest:
            key, _, value = rest.partition("=")
            args[key] = value
    base = [rest for keyword, rest in steps if keyword == "FROM"]
    assert len(base) == 1
    image = re.sub(r"\$\{(\w+)\}", lambda m: args[m.group(1)], base[0].split()[0])
    assert ":" in image and not image.endswith(":latest"), f"{name}: pin the base image's tag"

    pins = pinned_versions()
    for keyword, rest in steps:
        if keyword == "RUN" and "apt-get install" in rest:
            assert "--no-install-recommends" in rest, f"{name}: apt-get install pulls extras"
            assert "rm -rf /var/lib/apt/lists" in rest, f"{name}: apt lists left in the layer"
        if keyword == "RUN" and "pip install" in rest:
            assert "--no-cache-dir" in rest and "-c constraints.txt" in rest, (
                f"{name}: pip must install the locked versions without keeping its cache")
            for requirement in re.findall(r"\b([A-Za-z][\w.-]*)==([\w.+-]+)", rest):
                package, version = requirement[0].lower().replace("_", "-"), requirement[1]
                if package in pins:
                    assert pins[package] == version, f"{name}: {package} differs from the lock"
        if keyword in ("CMD", "ENTRYPOINT"):
            assert rest.startswith("["), f"{name}: {keyword} in exec form, so signals reach it"
            json.loads(rest)
        if keyword == "COPY":
            *sources, _target = shlex.split(rest)
            for source in sources:
                assert (ROOT / source).exists(), f"{name}: COPY {source} does not exist"


def test_the_image_installs_the_whole_project_as_a_package() -> None:
    steps = instructions(ROOT / "Dockerfile")
    # One COPY of the whole build context: a new package, app, template or data file needs no
    # line in the Dockerfile (a per-directory COPY is what used to leave things out).
    copies = [shlex.split(rest) for keyword, rest in steps if keyword in ("COPY", "ADD")]
    assert copies == [[".", "."]], f"the Dockerfile must only `COPY . .`, not {copies}"

    [install] = [rest for keyword, rest in steps if keyword == "RUN" and "pip install" in rest]
    argv = shlex.split(install)
    assert "-e" not in argv and "--editable" not in argv, (
        "install the project as a package (an editable install runs the copied source)")
    assert ".[trainers]" in argv, "the emulator runs the trainers: install the `trainers` extra"
    assert "--extra-index-url" in argv, "torch comes from PyTorch's CPU wheel index"
    assert argv[argv.index("--extra-index-url") + 1] == "https://download.pytorch.org/whl/cpu"

    # The installed settings live in site-packages: the writable state goes under WORKDIR.
    [workdir] = [rest for keyword, rest in steps if keyword == "WORKDIR"]
    env = " ".join(rest for keyword, rest in steps if keyword == "ENV")
    assert re.search(rf"\bCP_VAR_DIR={re.escape(workdir.rstrip('/'))}/var\b", env), (
        "set CP_VAR_DIR: the default (next to config/) is inside site-packages once installed")

    # The image's default command is compose's web service.
    cmd = json.loads(dict(steps)["CMD"])
    assert cmd == shlex.split(compose_services()["web"]["command"])


def test_dockerignore_keeps_local_state_out_and_the_sources_in() -> None:
    patterns = dockerignore_patterns()
    for entry in (".git", ".venv", "var"):
        assert dockerignored(PurePosixPath(entry), patterns), f".dockerignore must exclude {entry}"
    assert dockerignored(PurePosixPath("controlplane/runs/__pycache__"), patterns)
    needed = [PurePosixPath(name) for name in
              ("pyproject.toml", "constraints.txt", "manage.py", *PACKAGES)]
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*"):
            if "__pycache__" not in path.parts and path.suffix not in (".pyc", ".pyo"):
                needed.append(PurePosixPath(path.relative_to(ROOT).as_posix()))
    dropped = sorted(str(p) for p in needed
                     if any(dockerignored(PurePosixPath(*p.parts[:i]), patterns)
                            for i in range(1, len(p.parts) + 1)))
    assert not dropped, f".dockerignore drops what the image needs: {dropped[:20]}"


def test_the_trainer_images_default_command_is_accepted_by_the_trainer() -> None:
    from trainers.train import build_parser  # the trainers' extra is installed for the tests

    steps = dict(instructions(ROOT / "Dockerfile.trainer"))
    entrypoint = json.loads(steps["ENTRYPOINT"])
    assert entrypoint == ["python", "-m", "trainers.train"]
    build_parser().parse_args(json.loads(steps["CMD"]))


def test_compose_runs_the_dev_stacks_commands() -> None:
    services = compose_services()
    stack = Stack(StackConfig(var_dir=ROOT / "var" / "compose-check", database_url="sqlite://",
                              broker_url="redis://"))
    ours = stack.commands()

    def program(argv: list[str]) -> list[str]:
        # The dev stack runs modules with its interpreter; compose runs their console scripts.
        if argv[:2] == [argv[0], "-m"] and argv[0].endswith(("python", "python3")):
            return argv[2:]
        return argv[1:] if argv[0].endswith(("python", "python3")) else argv

    def flags(argv: list[str]) -> set[str]:
        return {a for a in argv if a.startswith("--")}

    for name, service in (("emulator", "localvertex"), ("worker", "worker"),
                          ("beat", "beat"), ("web", "web")):
        theirs = shlex.split(services[service]["command"])
        theirs = theirs[2:] if theirs[:2] == ["python", "-m"] else theirs
        mine = program([Path(ours[name][0]).name, *ours[name][1:]])
        assert theirs[0] == mine[0], f"{service} runs {theirs[0]}, the dev stack {mine[0]}"
        # Host names, ports and paths differ between a laptop and containers; the options that
        # change behaviour (concurrency, gossip, threads) must not.
        missing = flags(mine) - flags(theirs) - {"--hostname", "--access-logfile"}
        assert not missing, f"{service} lacks {sorted(missing)} that the dev stack passes"
        if mine[0] == "celery":
            # The Celery app is config.celery's, found through `-A config` (config/__init__.py).
            assert theirs[:3] == mine[:3] == ["celery", "-A", "config"], service
            assert theirs[3] == mine[3], f"{service} runs `celery {theirs[3]}`"
        if mine[0] == "gunicorn":
            assert theirs[1] == mine[1] == "config.wsgi", service

    assert shlex.split(services["migrate"]["command"])[:3] == ["python", "manage.py", "migrate"]
    assert (ROOT / "manage.py").is_file()
    for service in ("localvertex", "migrate", "web", "worker", "beat"):
        assert services[service]["build"] == ".", f"{service} must run the control plane image"
    for service in ("web", "worker", "beat"):
        needs = services[service]["depends_on"]
        assert needs["migrate"] == {"condition": "service_completed_successfully"}, (
            f"{service} must start after the migrations")
