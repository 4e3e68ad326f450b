"""A Model that runs vLLM, served locally by the product's own model server.

Vertex's prebuilt vLLM container (Model Garden: `us-docker.pkg.dev/vertex-ai/vertex-vision-
model-garden-dockers/pytorch-vllm-serve:<tag>`) runs `python -m vllm.entrypoints.api_server`
(or vLLM's OpenAI entrypoint, or `vllm serve MODEL`) with arguments such as `--model=gs://...
--tensor-parallel-size=1 --max-model-len=4096 --gpu-memory-utilization=0.9 --dtype=bfloat16
--host=0.0.0.0 --port=8080`. vLLM needs a GPU; the emulator runs `python -m trainers.serve
--vllm-compat` instead, on the same model folder, answering the same HTTP contract
(trainers/serving/vllm_api.py and openai_api.py), and translates what has a meaning there:

    --model               the model folder: the Model's artifact_uri (the replica's
                          AIP_STORAGE_URI, its local copy), or, for a Model without one, a
                          gs:// (or /gcs/) folder, read from the emulator's buckets
    --max-model-len       --max-model-len (the context: longer prompts are refused)
    --dtype               --dtype
    --served-model-name   --served-model-name
    --max-num-seqs        --max-batch (sequences decoded together)

`--port` is dropped: every local replica listens on its own AIP_HTTP_PORT (on Vertex the
container's port is that one too). Everything else (--tensor-parallel-size, --gpu-memory-
utilization, --swap-space, and any argument this table does not know: Model Garden passes many)
is ignored, its name (never its value, which may be a key) passed to the server to log.
Arguments stay argv elements from start to end: no shell ever reads them.
"""

from __future__ import annotations

import sys

from localvertex.replicas.storage import FUSE_ROOT, GCS_SCHEME, local_path

VLLM_MODULES = ("vllm.entrypoints.api_server", "vllm.entrypoints.openai.api_server")
SERVER_MODULE = "trainers.serve"
STORAGE_REFERENCES = ("$(AIP_STORAGE_URI)", "${AIP_STORAGE_URI}", "$AIP_STORAGE_URI")
# vLLM's argument -> the product's server's.
TRANSLATED = {
    "max-model-len": "--max-model-len",
    "dtype": "--dtype",
    "served-model-name": "--served-model-name",
    "max-num-seqs": "--max-batch",
}
DROPPED = frozenset({"port"})  # the replica's own AIP_HTTP_PORT instead
# vLLM's flags that take no value, so a word after one is not read as its value.
FLAGS = frozenset({
    "trust-remote-code", "enforce-eager", "disable-log-stats", "disable-log-requests",
    "enable-prefix-caching", "no-enable-prefix-caching", "enable-chunked-prefill",
    "enable-lora", "disable-custom-all-reduce", "enable-auto-tool-choice",
    "disable-frontend-multiprocessing", "enable-log-requests", "disable-fastapi-docs",
})


def vllm_args(argv: list[str]) -> list[str] | None:
    """The arguments of the vLLM server `argv` starts, or None when it starts none."""
    for i in range(1, len(argv) - 1):
        if argv[i] == "-m" and argv[i + 1] in VLLM_MODULES \
                and argv[i - 1].rsplit("/", 1)[-1].startswith("python"):
            return argv[i + 2:]
    if argv[:2] == ["vllm", "serve"]:
        rest = argv[2:]
        if rest and not rest[0].startswith("-"):  # vllm serve MODEL [args]
            return [f"--model={rest[0]}", *rest[1:]]
        return rest
    return None


def parse(args: list[str]) -> list[tuple[str, str | None]]:
    """(name without dashes, value or None) for every argument, in order; a word that
    follows no argument is kept under the name "" (named in the log as ignored)."""
    parsed: list[tuple[str, str | None]] = []
    i = 0
    while i < len(args):
        word = args[i]
        i += 1
        if not word.startswith("--"):
            parsed.append(("", word))
            continue
        name, eq, value = word[2:].partition("=")
        if eq:
            parsed.append((name, value))
        elif name not in FLAGS and i < len(args) and not args[i].startswith("--"):
            parsed.append((name, args[i]))
            i += 1
        else:
            parsed.append((name, None))
    return parsed


def server_argv(args: list[str], artifact_uri: str, data_dir: str | None,
                python: str = sys.executable) -> list[str]:
    """The product's server's command line standing in for vLLM's with `args`."""
    argv = [python, "-m", SERVER_MODULE, "--vllm-compat"]
    ignored: list[str] = []
    for name, value in parse(args):
        if name == "model" and value is not None:
            folder = model_folder(value, artifact_uri, data_dir)
            if folder is None and value.rstrip("/") != artifact_uri.rstrip("/") \
                    and value not in STORAGE_REFERENCES:
                ignored.append("--model (neither the Model's artifact_uri nor, for a Model "
                               "without one, a bucket folder)")
            elif folder is not None:
                argv += ["--model-dir", folder]
        elif name in TRANSLATED and value is not None:
            argv += [TRANSLATED[name], value]
        elif name in DROPPED:
            ignored.append(f"--{name} (the replica listens on its AIP_HTTP_PORT)")
        else:
            ignored.append(f"--{name}" if name else "(a word without an argument name)")
    for note in dict.fromkeys(ignored):
        argv.append(f"--vllm-ignored={note}")
    return argv


def model_folder(value: str, artifact_uri: str, data_dir: str | None) -> str | None:
    """The folder to serve for vLLM's --model: None where it is the Model's artifact_uri
    (the server reads the replica's AIP_STORAGE_URI, its local copy) or anything but a bucket
    folder; a bucket folder's local stand-in for a Model without an artifact_uri."""
    if artifact_uri or value in STORAGE_REFERENCES:
        return None
    if data_dir is not None and value.startswith((GCS_SCHEME, FUSE_ROOT)):
        try:
            return local_path(data_dir, value)
        except ValueError:
            return None
    return None
