"""A real Triton server for a generated repository, here: the tritonserver (2.51.0, CPU) that
PyTriton's wheel bundles, started as Vertex starts Triton's image (AIP_MODE=PREDICTION: it
reads the repository from AIP_STORAGE_URI and answers on AIP_HTTP_PORT at AIP_PREDICT_ROUTE
and AIP_HEALTH_ROUTE, VERTEX_FACTS.md A6).

    python -m trainers.serving.triton_local REPOSITORY --port 8080 [--name gpt]
    AIP_STORAGE_URI=REPOSITORY AIP_HTTP_PORT=8080 \
        python -m trainers.serving.triton_local --vertex-ai-default-model=gpt

The bundled server has only the Python backend, so it serves a twin of the repository: the
same config but for ``platform: "onnxruntime_onnx"`` replaced by ``backend: "python"``, and
the same model.onnx run by onnxruntime from ``triton_python_model.py``. The tensors, dims and
dynamic batching the server loads are the generated config's. Runs in the Triton environment
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


def python_twin(repository: str, name: str, twin: str) -> str:
    """Write the Python-backend twin of ``repository``'s model ``name`` under ``twin``."""
    source = os.path.join(repository, triton_repo.check_name(name))
    with open(os.path.join(source, triton_repo.CONFIG_FILE), encoding="utf-8") as f:
        config = f.read()
    platform = 'platform: "onnxruntime_onnx"\n'
    if platform not in config:
        raise triton_repo.RepositoryError(f"{source}: not an onnxruntime_onnx model")
    version = os.path.join(twin, name, triton_repo.VERSION)
    os.makedirs(version, exist_ok=True)
    with open(os.path.join(twin, name, triton_repo.CONFIG_FILE), "w", encoding="utf-8") as f:
        f.write(config.replace(platform, 'backend: "python"\n'))
    shutil.copyfile(os.path.join(source, triton_repo.VERSION, triton_repo.ONNX_FILE),
                    os.path.join(version, triton_repo.ONNX_FILE))
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copyfile(os.path.join(here, "triton_python_model.py"),
                    os.path.join(version, "model.py"))
    return twin


def server_layout(scratch: str) -> tuple[str, str, str]:
    """The bundled server's binary, a backend folder holding the Python backend with the stub
    for this interpreter (as PyTriton lays it out), and its libraries' folder."""
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
    return str(root / "bin" / "tritonserver"), backends, str(distribution.get_libs_path())


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
    twin = python_twin(args.repository, args.name, os.path.join(scratch, "repository"))
    binary, backends, libs = server_layout(scratch)
    env = dict(os.environ)
    # The Python stub embeds libpython: this interpreter's, and this environment's packages
    # (onnxruntime, numpy) found through the `python` first on PATH.
    env["LD_LIBRARY_PATH"] = os.pathsep.join(
        p for p in (libs, sysconfig.get_config_var("LIBDIR"), env.get("LD_LIBRARY_PATH")) if p)
    env["PATH"] = os.pathsep.join((os.path.dirname(sys.executable), env.get("PATH", "")))
    env.update(AIP_MODE="PREDICTION", AIP_HTTP_PORT=str(args.port), AIP_STORAGE_URI=twin,
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
