"""A Model that runs Vertex's vLLM container is served locally by the product's own server:
replica_argv translates vLLM's command line (localvertex/serving/vllm_local.py)."""

from __future__ import annotations

import sys

from localvertex.serving.model_servers import replica_argv
from localvertex.serving.store import ModelPb

IMAGE = ("us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-dockers/"
         "pytorch-vllm-serve:20250202_0916_RC00")
SERVER = [sys.executable, "-m", "trainers.serve", "--vllm-compat"]


def _model(args: list[str], command: list[str] | None = None, artifact_uri: str = "") -> ModelPb:
    model = ModelPb(artifact_uri=artifact_uri)
    model.container_spec.image_uri = IMAGE
    model.container_spec.command.extend(command or [])
    model.container_spec.args.extend(args)
    return model


def test_model_gardens_command_line_runs_the_products_server_with_the_args_that_mean_something(
) -> None:
    # As Model Garden's notebooks upload it: the whole command line in args.
    args = ["python", "-m", "vllm.entrypoints.api_server", "--host=0.0.0.0", "--port=8080",
            "--model=gs://team-a/exports/llama/", "--tensor-parallel-size=1",
            "--swap-space=16", "--gpu-memory-utilization=0.9", "--max-model-len", "4096",
            "--dtype=bfloat16", "--disable-log-stats", "--api-key=s3cret", "--max-num-seqs=8"]
    argv = replica_argv(_model(args, artifact_uri="gs://team-a/exports/llama"), "/data")
    assert argv == [*SERVER, "--max-model-len", "4096", "--dtype", "bfloat16",
                    "--max-batch", "8",
                    "--vllm-ignored=--host", "--vllm-ignored=--port (the replica listens on "
                    "its AIP_HTTP_PORT)", "--vllm-ignored=--tensor-parallel-size",
                    "--vllm-ignored=--swap-space", "--vllm-ignored=--gpu-memory-utilization",
                    "--vllm-ignored=--disable-log-stats", "--vllm-ignored=--api-key"]
    assert not any("s3cret" in word for word in argv)  # names only: a value may be a key


def test_the_openai_entrypoint_and_vllm_serve_read_the_models_folder() -> None:
    # The model is the artifact's copy (AIP_STORAGE_URI) unless the Model has no artifact_uri;
    # then a bucket folder is read from the emulator's buckets.
    argv = replica_argv(_model(["--model", "$(AIP_STORAGE_URI)", "--served-model-name", "m"],
                               ["python3", "-m", "vllm.entrypoints.openai.api_server"],
                               "gs://b/m"), "/data")
    assert argv == [*SERVER, "--served-model-name", "m"]
    argv = replica_argv(_model(["serve", "gs://b/exports/qwen", "--max-model-len=64"],
                               ["vllm"]), "/data")
    assert argv == [*SERVER, "--model-dir", "/data/gcs/b/exports/qwen", "--max-model-len", "64"]
    # Not a bucket folder (a hub name): nothing to load here, and the log says why.
    argv = replica_argv(_model(["-m", "vllm.entrypoints.api_server", "--model=meta/llama"],
                               ["python"]), "/data")
    assert argv[:4] == SERVER and argv[4].startswith("--vllm-ignored=--model (neither")
    # Any other command is run as before.
    assert replica_argv(_model(["-m", "trainers.serve"], ["python"]))[1:] == [
        "-m", "trainers.serve"]
