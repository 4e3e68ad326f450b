"""The files that ship the product but that nothing here builds: the Dockerfiles,
.dockerignore and the compose file. Docker does not run on the test machines, so they are checked
as text: the rules a Dockerfile linter applies that matter here, that everything they copy
exists, that the control plane image installs the whole project as a package (so it cannot drift
from pyproject.toml: test_wheel.py checks what that package holds), that the trainer image's
command is one the trainer accepts, that the TPU images install the trainers with the right
extra from the right lock, and that compose runs the dev stack's commands."""

from __future__ import annotations

import ast
import json
import re
import shlex
from pathlib import Path, PurePosixPath

import pytest
import yaml

from config.devstack import Stack, StackConfig
from tests.house.packaging import PACKAGES, ROOT, dockerignore_patterns, dockerignored

# Each Dockerfile and the file that locks what its pip installs: the project's constraints,
# except for PyTorch/XLA, whose torch differs from the project's (requirements-tpu-xla.txt).
LOCKS = {
    "Dockerfile": "constraints.txt",
    "Dockerfile.trainer": "constraints.txt",
    "Dockerfile.tpu-jax": "constraints.txt",
    "Dockerfile.tpu-xla": "requirements-tpu-xla.txt",
}
DOCKERFILES = list(LOCKS)
# name==version, with or without extras (jax[tpu]==0.10.2).
REQUIREMENT = re.compile(r"\b([A-Za-z][\w.-]*)(?:\[[\w,.-]+\])?==([\w.+-]+)")


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


def normalized(package: str) -> str:
    return package.lower().replace("_", "-")


def pinned_versions(lock: str = "constraints.txt") -> dict[str, str]:
    pins = {}
    for line in (ROOT / lock).read_text().splitlines():
        found = REQUIREMENT.match(line.strip())
        if found and not line.lstrip().startswith("#"):
            pins[normalized(found.group(1))] = found.group(2)
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

    lock = LOCKS[name]
    pins = pinned_versions(lock)
    for keyword, rest in steps:
        if keyword == "RUN" and "apt-get install" in rest:
            assert "--no-install-recommends" in rest, f"{name}: apt-get install pulls extras"
            assert "rm -rf /var/lib/apt/lists" in rest, f"{name}: apt lists left in the layer"
        if keyword == "RUN" and "pip install" in rest:
            # Locked: constrained by the lock, installing the lock itself, or nothing but the
            # project's own code (--no-deps).
            locked = any(f"{flag} {lock}" in rest for flag in ("-c", "-r")) or "--no-deps" in rest
            assert "--no-cache-dir" in rest and locked, (
                f"{name}: pip must install the versions of {lock} without keeping its cache")
            for requirement in REQUIREMENT.findall(rest):
                package, version = normalized(requirement[0]), requirement[1]
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
    [project] = [a for a in argv if a.startswith(".[")]
    extras = set(project[2:-1].split(","))
    assert {"trainers", "jax"} <= extras, (
        "the emulator runs the trainers, PyTorch and JAX: install the `trainers` and `jax` extras")
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


def pip_installs(name: str) -> list[list[str]]:
    return [shlex.split(rest) for keyword, rest in instructions(ROOT / name)
            if keyword == "RUN" and "pip install" in rest]


def project_installs(argv: list[str]) -> list[str]:
    """The project itself in one pip install's arguments: "." or ".[extra,...]"."""
    return [a for a in argv if a == "." or a.startswith(".[")]


@pytest.mark.parametrize("name", ["Dockerfile.tpu-jax", "Dockerfile.tpu-xla"])
def test_the_tpu_images_install_the_trainers_as_a_package(name: str) -> None:
    steps = instructions(ROOT / name)
    for argv in pip_installs(name):
        assert "-e" not in argv and "--editable" not in argv, (
            f"{name}: install the project as a package (an editable install runs the copied "
            "source)")
    copied = {shlex.split(rest)[0] for keyword, rest in steps if keyword == "COPY"}
    assert "trainers" in copied and not copied & {"controlplane", "config", "."}, (
        f"{name}: a TPU image holds the trainers, not the control plane")
    entrypoint = json.loads(dict(steps)["ENTRYPOINT"])
    assert entrypoint[:2] == ["python", "-m"]


def copied(name: str) -> set[str]:
    """The top-level folders and files a Dockerfile copies from the build context."""
    out = set()
    for keyword, rest in instructions(ROOT / name):
        if keyword in ("COPY", "ADD"):
            *sources, _target = shlex.split(rest)
            out.update(PurePosixPath(source).parts[0] for source in sources)
    return out


def project_imports(package: str) -> set[str]:
    """The project's top-level packages that the modules of `package` import."""
    found = set()
    for path in (ROOT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".")[0])
    return found & set(PACKAGES)


TRAINER_IMAGES = sorted(p.name for p in ROOT.glob("Dockerfile.*") if "trainers" in copied(p.name))


def test_the_trainer_images_are_all_found() -> None:
    assert {"Dockerfile.trainer", "Dockerfile.tpu-jax", "Dockerfile.tpu-xla",
            "Dockerfile.triton-tools", "Dockerfile.tensorrt-tools"} <= set(TRAINER_IMAGES)


@pytest.mark.parametrize("name", TRAINER_IMAGES)
def test_an_image_of_the_trainers_holds_the_contract_and_all_they_import(name: str) -> None:
    # The contract (contract/) is the trainers' half of what the control plane reads.
    needed = {"trainers", "contract"} | project_imports("trainers")
    assert not needed - copied(name), f"{name} does not copy {sorted(needed - copied(name))}"
    # What is copied is installed: the project itself, after the copies.
    steps = instructions(ROOT / name)
    last_copy = max(i for i, (keyword, _) in enumerate(steps) if keyword == "COPY")
    assert any(keyword == "RUN" and "pip install" in rest and i > last_copy
               and project_installs(shlex.split(rest)) for i, (keyword, rest) in enumerate(steps))


def test_the_jax_tpu_image_runs_the_jax_trainer_with_the_locked_jax() -> None:
    steps = dict(instructions(ROOT / "Dockerfile.tpu-jax"))
    assert json.loads(steps["ENTRYPOINT"]) == ["python", "-m", "trainers.jax"]
    [install] = pip_installs("Dockerfile.tpu-jax")
    assert project_installs(install) == [".[jax]"], "the JAX image installs the `jax` extra"
    # The TPU runtime comes with jax's own `tpu` extra, for exactly the jax of the lock.
    assert f"jax[tpu]=={pinned_versions()['jax']}" in install
    assert not any(a.startswith("torch") for a in install), "the JAX image needs no torch"


def test_the_pytorch_xla_image_keeps_its_own_torch() -> None:
    steps = instructions(ROOT / "Dockerfile.tpu-xla")
    assert json.loads(dict(steps)["ENTRYPOINT"]) == ["python", "-m", "trainers.xla"]
    env = " ".join(rest for keyword, rest in steps if keyword == "ENV")
    assert re.search(r"\bPJRT_DEVICE=TPU\b", env)
    xla = pinned_versions("requirements-tpu-xla.txt")
    assert xla["torch"] != pinned_versions()["torch"], (
        "torch_xla pins its own torch: the project's lock must not decide it")
    assert xla["torch-xla"].split(".")[:2] == xla["torch"].split(".")[:2], (
        "torch_xla runs only with the torch release it was built for")
    dependencies, project = pip_installs("Dockerfile.tpu-xla")
    assert dependencies[dependencies.index("-r") + 1] == "requirements-tpu-xla.txt"
    assert "-c" not in dependencies, "constraints.txt would force the project's torch"
    # The project's own dependencies (the control plane's, torch 2.13 for the GPU trainers)
    # stay out: only its code is installed.
    assert project_installs(project) == ["."] and "--no-deps" in project


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
    from trainers.torch.main import build_parser  # the trainers' extra is installed for the tests

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
            # ASGI, so the job page's event streams hold no thread (config/asgi.py).
            assert theirs[1] == mine[1] == "config.asgi", service
            assert theirs[theirs.index("--worker-class") + 1] == "asgi", service

    assert shlex.split(services["migrate"]["command"])[:3] == ["python", "manage.py", "migrate"]
    assert (ROOT / "manage.py").is_file()
    for service in ("localvertex", "migrate", "web", "worker", "beat"):
        assert services[service]["build"] == ".", f"{service} must run the control plane image"
    for service in ("web", "worker", "beat"):
        needs = services[service]["depends_on"]
        assert needs["migrate"] == {"condition": "service_completed_successfully"}, (
            f"{service} must start after the migrations")


def test_compose_is_local_only_without_debug_and_with_a_generated_key() -> None:
    services = compose_services()
    assert services["web"]["ports"] == ["127.0.0.1:8000:8000"]
    for name, service in services.items():
        for port in service.get("ports", []):
            assert str(port).startswith("127.0.0.1:"), f"{name} publishes {port} beyond localhost"
    for name in ("migrate", "web", "worker", "beat"):
        env = services[name]["environment"]
        assert env["DEBUG"] == "false", name
        assert "SECRET_KEY" not in env and env["SECRET_KEY_FILE"].startswith("/run/cp-secrets/")
    assert services["secret-key"]["command"] == "python config/compose_secrets.py"
    # The emulator runs what teams submit: it gets neither the database nor the key.
    emulator = services["localvertex"]
    assert "environment" not in emulator and "volumes" in emulator
    assert not any("secrets" in v for v in emulator["volumes"])


def test_every_long_running_service_restarts_and_every_one_shot_runs_once() -> None:
    """A crashed or rebooted worker, beat, web, emulator, Redis or PostgreSQL comes back by
    itself (the sweeps are level-triggered, but only a running worker runs them); a one-shot
    service restarted after it succeeded would run again and again, and what waits for it to
    complete would never start."""
    services = compose_services()
    one_shots = {dependency for service in services.values()
                 for dependency, needs in (service.get("depends_on") or {}).items()
                 if needs == {"condition": "service_completed_successfully"}}
    assert one_shots == {"secret-key", "migrate"}
    for name, service in services.items():
        wanted = "no" if name in one_shots else "unless-stopped"
        assert service.get("restart") == wanted, (
            f"{name}: restart is {service.get('restart')!r}, not {wanted!r}")
