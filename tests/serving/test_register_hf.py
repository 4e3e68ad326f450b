"""Registering a Hugging Face model folder (format hf) and serving it with vLLM: the folder is
checked through the storage backend before anything is recorded, the vllm entry's container is
Model Garden's, and each refusal is a 400 naming the field (the file and the key, the figures
of a model that does not fit) with nothing registered or deployed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from controlplane.backends.serving_base import PredictResult
from controlplane.runs.models import Job
from controlplane.serving import lifecycle, registry
from controlplane.serving.models import Deployment, ModelEntry
from tests.serving.fakes import FakeServing
from tests.serving.test_lifecycle import ready_endpoint
from vertexplan import serving_vllm

FOLDER = "gs://cp-local-bucket/jobs/vision/exports/llama"  # under team vision's default prefix
CONFIG = {"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "intermediate_size": 96,
          "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
          "vocab_size": 300, "max_position_embeddings": 128, "dtype": "float32"}


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def bucket(settings: Any, tmp_path: Path) -> Path:
    """Buckets as local folders, as the emulator keeps them."""
    settings.CP_LOCAL_GCS_ROOT = str(tmp_path)
    return tmp_path


def write_export(bucket: Path, uri: str = FOLDER, config: dict | None = None,
                 files: tuple[str, ...] = ("model.safetensors", "tokenizer.json")) -> Path:
    folder = bucket / uri.removeprefix("gs://")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config or CONFIG))
    for name in files:
        (folder / name).write_bytes(b"{}")
    return folder


def register(user: Any, **body: Any) -> Any:
    return api(user).post("/api/v1/serving/models/", {
        "format": "hf", "artifact_uri": FOLDER, **body}, format="json")


def test_an_hf_folder_registers_for_vllm_with_model_garden_s_container(
        fake: FakeServing, queued: list, bucket: Path, member: Any,
        django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    write_export(bucket)
    with django_capture_on_commit_callbacks(execute=True):
        response = register(member, runtime="vllm", machine_type="g2-standard-8",
                            max_model_len=64, dtype="bfloat16")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["format"], body["architecture"], body["parameter_count"]) == (
        "hf", "LlamaForCausalLM", 100_160)
    assert body["job"] is None and body["image_uri"] == serving_vllm.IMAGE_URI
    assert body["command"] == [] and body["args"][:6] == [
        "python", "-m", "vllm.entrypoints.api_server", "--host=0.0.0.0", "--port=8080",
        f"--model={FOLDER}"]
    assert "--tensor-parallel-size=1" in body["args"] and "--max-model-len=64" in body["args"]
    assert body["vllm"] == {"machine_type": "g2-standard-8", "accelerator_type": "NVIDIA_L4",
                            "accelerator_count": 1, "max_model_len": 64, "dtype": "bfloat16",
                            "gpu_memory_utilization": 0.9}
    assert queued == [("upload_model", (str(body["id"]),))]
    registry.upload(body["id"])
    container = fake.models[f"{ModelEntry.objects.get().vertex_name}"]["container"]
    assert (container.port, container.predict_route, container.health_route) == (
        8080, "/generate", "/ping")
    assert container.env == {"MODEL_ID": FOLDER}
    assert (container.deployment_timeout_s, container.shared_memory_mb) == (7200, 16384)
    labels = fake.models[ModelEntry.objects.get().vertex_name]["labels"]
    assert "cp-job" not in labels and labels["cp-team"] == "vision"

    # Deployed only on as many GPUs as its tensor parallel size, with the figures.
    entry = ModelEntry.objects.get()
    endpoint = ready_endpoint(entry.team, member)
    response = api(member).post(f"/api/v1/serving/endpoints/{endpoint.pk}/deployments/", {
        "model": entry.pk, "machine_type": "g2-standard-24"}, format="json")
    assert response.status_code == 400
    assert "tensor parallel size 1" in response.json()["accelerator_count"][0]
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                  machine_type="a2-highgpu-1g")
    assert deployment.state == Deployment.State.DEPLOYING
    assert Deployment.objects.count() == 1

    # Model Garden's /generate answers strings; the predict route asks for the text alone.
    lifecycle.send_deploy(deployment.pk)
    sent: list[Any] = []

    def generate(endpoint: str, instances: list[Any], *args: Any, **kwargs: Any) -> Any:
        sent.extend(instances)
        return PredictResult(["generated" for _ in instances], "1")

    monkeypatch.setattr(fake, "predict", generate)
    response = api(member).post(f"/api/v1/serving/endpoints/{endpoint.pk}/predict/", {
        "instances": ["def ", {"prompt": "x", "max_tokens": 3}]}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["predictions"] == [{"text": "generated"}] * 2
    assert sent == [{"prompt": "def ", "raw_response": True},
                    {"prompt": "x", "max_tokens": 3, "raw_response": True}]


def test_a_job_s_hf_export_registers_for_the_product_s_server(
        fake: FakeServing, queued: list, bucket: Path, trained_job: Job, member: Any) -> None:
    write_export(bucket, f"{trained_job.output_uri}/model",
                 files=("model.safetensors.index.json", "model-00001-of-00001.safetensors",
                        "tokenizer.json"))
    (bucket / f"{trained_job.output_uri}/model/model.safetensors.index.json".removeprefix(
        "gs://")).write_text(json.dumps({"weight_map": {
            "lm_head.weight": "model-00001-of-00001.safetensors"}}))
    entry = registry.register(job=trained_job, user=member, step=None, format="hf")
    assert (entry.format, entry.runtime, entry.job_id) == ("hf", "eager", trained_job.pk)
    assert entry.command == ["python", "-m", "trainers.serve"]
    assert entry.hf_facts["weight_files"] == ["model-00001-of-00001.safetensors"]


@pytest.mark.parametrize(("body", "field", "words"), [
    ({"runtime": "vllm", "format": "product", "job": None}, "runtime",
     "vllm serves Hugging Face models"),
    ({"runtime": "aot"}, "runtime", "for the hf format one of eager, compiled, vllm"),
    ({"artifact_uri": "gs://cp-local-bucket/jobs/speech/llama"}, "artifact_uri",
     "outside team vision's output prefix"),
    ({"artifact_uri": "gs://cp-local-bucket/jobs/vision/../speech/x"}, "artifact_uri",
     "not a gs:// folder"),
    ({"artifact_uri": f"{FOLDER}-none"}, "artifact_uri", "/config.json: missing"),
    ({"runtime": "vllm"}, "machine_type", "name machine_type"),
    ({"runtime": "vllm", "machine_type": "n1-standard-4"}, "machine_type", "has none"),
    ({"runtime": "vllm", "machine_type": "g2-standard-8", "max_model_len": 129},
     "max_model_len", "max_position_embeddings (128)"),
    ({"runtime": "vllm", "machine_type": "g2-standard-8", "dtype": "int3"}, "dtype",
     "not one of vLLM's"),
])
def test_bad_input_is_a_400_naming_the_field_and_nothing_is_registered(
        fake: FakeServing, queued: list, bucket: Path, member: Any, body: dict, field: str,
        words: str) -> None:
    write_export(bucket)
    response = register(member, **body)
    assert response.status_code == 400, response.content
    assert words in response.json()[field][0], response.json()
    assert not ModelEntry.objects.exists() and queued == []


def test_a_folder_that_cannot_be_served_is_refused_naming_its_file_and_key(
        fake: FakeServing, queued: list, bucket: Path, member: Any) -> None:
    write_export(bucket, config={**CONFIG, "architectures": ["BertModel"]})
    response = register(member)
    assert "config.json: key 'architectures' names 'BertModel'" in response.json()[
        "artifact_uri"][0]
    write_export(bucket, config={k: v for k, v in CONFIG.items() if k != "vocab_size"})
    assert "the required key 'vocab_size' is missing" in register(member).json()[
        "artifact_uri"][0]
    folder = write_export(bucket, files=("tokenizer.json",))
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {"x": "model-00001-of-00002.safetensors"}}))
    assert "lists shard 'model-00001-of-00002.safetensors', which is missing" in register(
        member).json()["artifact_uri"][0]
    folder = write_export(bucket, files=("model.safetensors",))
    (folder / "model.safetensors.index.json").unlink()
    (folder / "tokenizer.json").unlink()
    assert "no tokenizer" in register(member).json()["artifact_uri"][0]
    assert not ModelEntry.objects.exists()


def test_a_model_that_does_not_fit_the_gpus_is_refused_with_the_figures(
        fake: FakeServing, queued: list, bucket: Path, member: Any) -> None:
    """Llama-3-70B's shape on one L4: 131 GiB of weights against 20 GiB."""
    write_export(bucket, config={**CONFIG, "hidden_size": 8192, "intermediate_size": 28672,
                                 "num_hidden_layers": 80, "num_attention_heads": 64,
                                 "num_key_value_heads": 8, "vocab_size": 128256,
                                 "max_position_embeddings": 8192, "dtype": "bfloat16"})
    response = register(member, runtime="vllm", machine_type="g2-standard-8")
    assert response.status_code == 400
    [message] = response.json()["machine_type"]
    assert "does not fit g2-standard-8's GPUs: weights 131.42 GiB" in message
    assert "> 20.12 GiB available (1 x NVIDIA_L4 of 22.35 GiB x gpu_memory_utilization 0.9)" \
        in message
    response = register(member, runtime="vllm", machine_type="a3-highgpu-4g")
    assert response.status_code == 201, response.content
    assert "--tensor-parallel-size=4" in response.json()["args"]


def test_the_page_registers_an_hf_folder_and_shows_its_format_and_vllm_spec(
        fake: FakeServing, queued: list, bucket: Path, member: Any) -> None:
    write_export(bucket)
    client = Client()
    client.force_login(member)
    response = client.post("/serving/models/new/", {
        "format": "hf", "artifact_uri": FOLDER, "team": member.memberships.get().team_id,
        "runtime": "vllm", "machine_type": "g2-standard-8", "max_model_len": "64"})
    assert response.status_code == 302
    entry = ModelEntry.objects.get()
    assert (entry.format, entry.runtime, entry.vllm["max_model_len"]) == ("hf", "vllm", 64)
    page = client.get("/serving/").content.decode()
    assert "LlamaForCausalLM" in page and "100160 parameters" in page
    assert "python -m vllm.entrypoints.api_server --host=0.0.0.0 --port=8080 " \
           f"--model={FOLDER} --tensor-parallel-size=1" in page
    assert "predict /generate, health /ping" in page
    assert "1 x NVIDIA_L4 of 22.35 GiB x gpu_memory_utilization 0.9" in page  # the fit
