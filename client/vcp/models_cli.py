"""`vcp models`: your teams' model registry entries, and registering one.

\b
    vcp models list
    vcp models register --job 12 --step 400                      a checkpoint, eager
    vcp models register --hf --job 12                            the job's --export-hf export
    vcp models register --hf gs://bucket/jobs/vision/llama --team vision \\
        --runtime vllm --machine-type g2-standard-8 --max-model-len 4096

A Hugging Face model (--hf) is checked before it is registered: its config.json names a
supported architecture with the keys serving needs, its safetensors weights (every shard its
index lists) and its tokenizer are there. The vllm runtime is Model Garden's vLLM container on
the machine's GPUs (their count is the tensor parallel size); a model that does not fit them is
refused with the figures. Refusals exit 1 with the field at fault.
"""

from __future__ import annotations

from typing import Any

import click

from vcp import api
from vcp.context import Context, pass_context

MODEL_COLUMNS = ("id", "display_name", "team", "job", "format", "architecture",
                 "parameter_count", "runtime", "state", "artifact_uri")


@click.group("models")
def models() -> None:
    """Model registry entries of your teams."""


@models.command("list")
@pass_context
def models_list(ctx: Context) -> None:
    page = api.send(ctx.client, "GET", "/api/v1/serving/models/", params={"limit": 1000}).json()
    ctx.emit(page["results"] if isinstance(page, dict) else page, MODEL_COLUMNS)


@models.command("register")
@click.option("--job", "job_id", type=int, help="The training job whose weights to register.")
@click.option("--step", type=click.IntRange(min=0),
              help="A checkpoint step (the product's own format); default: the final export.")
@click.option("--hf", "hf", is_flag=False, flag_value="", default=None, metavar="[GS_FOLDER]",
              help="A Hugging Face model: the job's final export, or this gs:// folder under "
              "your team's prefix.")
@click.option("--team", help="Team slug of a folder registered without --job.")
@click.option("--runtime", default="eager", show_default=True,
              type=click.Choice(["eager", "compiled", "aot", "triton", "tensorrt", "vllm"]))
@click.option("--image", "image_uri", help="The serving image, when not the default.")
@click.option("--name", "display_name", help="The entry's name.")
@click.option("--machine-type", help="vllm: the machine whose GPUs serve it.")
@click.option("--accelerator-type", help="vllm on an n1 machine: the GPU type.")
@click.option("--accelerator-count", type=click.IntRange(min=1), help="vllm on n1: GPUs.")
@click.option("--max-model-len", type=click.IntRange(min=1),
              help="vllm: the longest sequence (default 4096 or the model's context).")
@click.option("--dtype", type=click.Choice(["auto", "bfloat16", "float16", "float32"]),
              help="vllm: the serving dtype (default auto).")
@click.option("--gpu-memory-utilization", type=click.FloatRange(0, 1, min_open=True),
              help="vllm: the share of each GPU vLLM takes (default 0.9).")
@pass_context
def models_register(ctx: Context, job_id: int | None, step: int | None, hf: str | None,
                    team: str | None, runtime: str, image_uri: str | None,
                    display_name: str | None, **vllm: Any) -> None:
    """Register a job's checkpoint or final export, or a Hugging Face model folder."""
    body: dict[str, Any] = {"runtime": runtime, "step": step}
    if job_id is not None:
        body["job"] = job_id
    if hf is not None:
        body.update(format="hf", artifact_uri=hf)
    for key, value in (("team", team), ("image_uri", image_uri),
                       ("display_name", display_name), *vllm.items()):
        if value is not None:
            body[key] = value
    entry = api.send(ctx.client, "POST", "/api/v1/serving/models/", body=body).json()
    click.echo(f"registered model {entry['id']} ({entry['display_name']}): uploading", err=True)
    ctx.emit(entry, MODEL_COLUMNS)
