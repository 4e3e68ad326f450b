"""A real Triton server for a generated repository, here: the tritonserver (2.51.0, CPU) that
PyTriton's wheel bundles, started as Vertex starts Triton's image (AIP_MODE=PREDICTION: it
reads the repository from AIP_STORAGE_URI and answers on AIP_HTTP_PORT at AIP_PREDICT_ROUTE
and AIP_HEALTH_ROUTE, VERTEX_FACTS.md A6).

    python -m trainers.serving.triton_local REPOSITORY --port 8080 [--name gpt]
    AIP_STORAGE_URI=REPOSITORY AIP_HTTP_PORT=8080 \
        python -m trainers.serving.triton_local --vertex-ai-default-model=gpt

Every model of the repository is served: the logits model, the KV-cached step graph and the
generation model that loops over it (triton_repo.py), the last the one Vertex's predict route
reaches when the container names it (``--vertex-ai-default-model=gpt_generate``). Where the
server has an onnxruntime backend (a backends folder beside its binary holding one) the
repository is served as it is. The bundled server has only the Python backend, so it then
serves a twin of the repository: each ``platform: "onnxruntime_onnx"`` model's config with that
line replaced by ``backend: "python"`` and its model.onnx run by onnxruntime from
``triton_python_model.py``; the Python models are copied as they are. The tensors, dims and
dynamic batching the server loads are the generated configs'. Runs in the Triton environment
(``make triton-env``); the process replaces itself with tritonserver (exec), so stopping it
stops the server.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import sysconfig
import tempfile

from trainers.serving import triton_repo

HEALTH_ROUTE = "/v2/health/ready"


def predict_route(name: str) -> str:
    return f"/v2/models/{triton_repo.check_name(name)}/infer"


def python_twin(repository: str, twin: str) -> str:
    """Write the Python-backend twin of every model in ``repository`` under ``twin``."""
    platform = 'platform: "onnxruntime_onnx"\n'
    here = os.path.dirname(os.path.abspath(__file__))
    models = sorted(entry for entry in os.listdir(repository)
                    if os.path.isfile(os.path.join(repository, entry, triton_repo.CONFIG_FILE)))
    if not models:
        raise triton_repo.RepositoryError(f"{repository}: no model folder with a "
                                          f"{triton_repo.CONFIG_FILE}")
    for name in models:
        source, target = os.path.join(repository, name), os.path.join(twin, name)
        with open(os.path.join(source, triton_repo.CONFIG_FILE), encoding="utf-8") as f:
            config = f.read()
        # Files only: the version folders' contents (graphs, model.py and its modules).
        shutil.copytree(source, target, ignore=lambda folder, names: [
            n for n in names if n.startswith(".")])
        if platform in config:
            with open(os.path.join(target, triton_repo.CONFIG_FILE), "w", encoding="utf-8") as f:
                f.write(config.replace(platform, 'backend: "python"\n'))
            shutil.copyfile(os.path.join(here, "triton_python_model.py"),
                            os.path.join(target, triton_repo.VERSION, "model.py"))
    return twin


def server_layout(scratch: str) -> tuple[str, str, str, bool]:
    """The bundled server's binary, a backend folder holding the Python backend with the stub
    for this interpreter (as PyTriton lays it out) and any other backend the server ships, its
    libraries' folder, and whether one of those backends is onnxruntime."""
    from pytriton.utils import distribution

    root = distribution.get_root_module_path() / "tritonserver"
    backends = os.path.join(scratch, "backends")
    python_backend = os.path.join(backends, "python")
    os.makedirs(python_backend)
    for entry in (root / "backends" / "python").iterdir():
        if entry.is_file():
            os.symlink(entry, os.path.join(python_backend, entry.name))
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    os.symlink(distribution.get_stub_path(version),
               os.path.join(python_backend, "triton_python_backend_stub"))
    for entry in (root / "backends").iterdir():
        if entry.is_dir() and entry.name != "python":
            os.symlink(entry, os.path.join(backends, entry.name))
    onnxruntime = os.path.isdir(os.path.join(backends, "onnxruntime"))
    return str(root / "bin" / "tritonserver"), backends, str(distribution.get_libs_path()), \
        onnxruntime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    # Unset, what Vertex gives Triton's image: the repository at AIP_STORAGE_URI, the port
    # AIP_HTTP_PORT, the model --vertex-ai-default-model names (how the emulator starts a
    # replica of a model whose container runs `tritonserver`).
    parser.add_argument("repository", nargs="?", default=os.environ.get("AIP_STORAGE_URI"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("AIP_HTTP_PORT", 8080)))
    parser.add_argument("--name", "--vertex-ai-default-model", dest="name", default="gpt")
    args = parser.parse_args(argv)
    if not args.repository:
        parser.error("repository: give one, or set AIP_STORAGE_URI")
    # Left for the OS's temporary-file cleaning: the process becomes tritonserver below.
    scratch = tempfile.mkdtemp(prefix="triton-local-")
    binary, backends, libs, onnxruntime = server_layout(scratch)
    triton_repo.check_name(args.name)
    served = args.repository if onnxruntime else python_twin(
        args.repository, os.path.join(scratch, "repository"))
    env = dict(os.environ)
    # The Python stub embeds libpython: this interpreter's, and this environment's packages
    # (onnxruntime, numpy) found through the `python` first on PATH.
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (libs, sysconfig.get_config_var("LIBDIR"), env.get("LD_LIBRARY_PATH")) if p)
    env["PATH"] = os.pathsep.join((os.path.dirname(sys.executable), env.get("PATH", "")))
    env.update(AIP_MODE="PREDICTION", AIP_HTTP_PORT=str(args.port), AIP_STORAGE_URI=served,
               AIP_PREDICT_ROUTE=predict_route(args.name), AIP_HEALTH_ROUTE=HEALTH_ROUTE)
    # Only the Vertex listener: the KServe HTTP, gRPC and metrics ports would collide between
    # servers on one machine and Vertex reaches none of them.
    command = [binary, f"--backend-directory={backends}", f"--vertex-ai-default-model={args.name}",
               "--allow-http=false", "--allow-grpc=false", "--allow-metrics=false"]
    sys.stdout.flush()
    os.execve(binary, command, env)
    return 0  # not reached


if __name__ == "__main__":
    raise SystemExit(main())
