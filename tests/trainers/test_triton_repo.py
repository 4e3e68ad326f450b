"""A Triton model repository generated from a model folder: its configs pass Triton's own
schema (the ModelConfig proto) and match the ONNX graphs, and the graphs answer as eager: the
logits model's, and the KV-cached step's that the generation model loops over."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path

import pytest
import torch

from tests.trainers import triton_env
from trainers.config import ModelConfig
from trainers.serving import triton_repo
from trainers.serving.triton_repo import Batching, RepositoryError
from trainers.torch.model import GPT

# Runs in .venv/triton (`make envs`; tests/trainers/triton_env.py builds it when missing).
pytestmark = pytest.mark.environment


def export_model(folder: Path, seed: int = 3) -> Path:
    config = ModelConfig()
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(GPT(config, seed=seed).state_dict(), folder / "model.pt")
    (folder / "config.json").write_text(
        json.dumps({"model": asdict(config), "step": 12}))
    return folder


@pytest.fixture(scope="module")
def repository(tmp_path_factory) -> tuple[Path, dict]:
    base = tmp_path_factory.mktemp("triton")
    model = export_model(base / "model")
    done = triton_env.run("-m", "trainers.serving.triton_package", str(model), str(base / "repo"),
                          "--max-batch-size", "16", "--preferred", "4", "16",
                          "--max-queue-delay-us", "500", "--check")
    return base / "repo", triton_env.last_json(done.stdout)


def test_config_passes_tritons_schema_and_the_graph_answers_as_eager(repository) -> None:
    repo, result = repository
    config = result["config"]
    assert config["platform"] == "onnxruntime_onnx"
    assert config["max_batch_size"] == 16
    assert config["input"] == [{"name": "tokens", "data_type": "TYPE_INT64", "dims": ["-1"]}]
    assert config["output"] == [{"name": "logits", "data_type": "TYPE_FP32",
                                 "dims": ["-1", "256"]}]
    assert config["dynamic_batching"] == {"preferred_batch_size": [4, 16],
                                          "max_queue_delay_microseconds": "500"}
    assert result["max_abs_diff"] <= 1e-4
    assert (repo / "gpt" / "1" / "model.onnx").stat().st_size > 100_000  # weights inside
    assert sorted(p.name for p in (repo / "gpt" / "1").iterdir()) == ["model.onnx"]


def test_the_generation_models_pass_the_same_checks(repository) -> None:
    repo, result = repository
    step = result["generation"]["gpt_step"]
    assert step["platform"] == "onnxruntime_onnx" and step["max_batch_size"] == 16
    assert [(t["name"], t["data_type"], t["dims"]) for t in step["input"]] == [
        ("tokens", "TYPE_INT64", ["-1"]), ("start", "TYPE_INT64", ["1"]),
        ("past_keys", "TYPE_FP32", ["2", "2", "64", "32"]),
        ("past_values", "TYPE_FP32", ["2", "2", "64", "32"])]
    # A prefill and four decoding steps on the keys and values it returned, as eager.
    assert result["step_max_abs_diff"] <= 1e-4
    generate = result["generation"]["gpt_generate"]
    assert generate["backend"] == "python"
    assert generate["parameters"]["step_model"] == {"string_value": "gpt_step"}
    assert generate["parameters"]["step_max_batch_size"] == {"string_value": "16"}
    # The contract's parsing beside the loop: the project is not importable inside Triton.
    assert (repo / "gpt_generate" / "1" / "prediction.py").read_text() == \
        (triton_env.ROOT / "contract" / "prediction.py").read_text()


@pytest.mark.parametrize(("edit", "message"), [
    (("max_batch_size: 16", "max_batch_size: 16\nmax_batchsize: 2"),
     'has no field named "max_batchsize"'),
    (("TYPE_INT64", "TYPE_INT65"), "TYPE_INT65"),
    (("TYPE_INT64", "TYPE_INT32"), "'tokens' is declared TYPE_INT32, the graph's is INT64"),
    (("dims: [ -1, 256 ]", "dims: [ 256 ]"), "'logits' has dims [-1, 256] with the batch"),
    (('name: "tokens"', 'name: "input_ids"'), "input 'input_ids' is not in the graph"),
])
def test_a_config_triton_would_refuse_is_refused(repository, tmp_path, edit, message) -> None:
    repo, _ = repository
    folder = tmp_path / "gpt"
    (folder / "1").mkdir(parents=True)
    (folder / "1" / "model.onnx").symlink_to(repo / "gpt" / "1" / "model.onnx")
    text = (repo / "gpt" / "config.pbtxt").read_text()
    assert edit[0] in text
    (folder / "config.pbtxt").write_text(text.replace(edit[0], edit[1], 1))
    done = triton_env.run("-c", "import sys; from trainers.serving import triton_check; "
                          "triton_check.validate_config(sys.argv[1])", str(folder), check=False)
    assert done.returncode != 0
    assert "RepositoryInvalid" in done.stderr and message in done.stderr


@pytest.mark.parametrize(("name", "batching", "message"), [
    ("../gpt", Batching(), "model name '../gpt'"),
    ("gpt", Batching(max_batch_size=8, preferred=(4, 16)), "preferred batch sizes"),
    ("gpt", Batching(max_batch_size=0), "max_batch_size"),
    ("gpt", Batching(max_queue_delay_us=-1), "max_queue_delay_us"),
])
def test_bad_settings_are_refused_naming_the_setting(name, batching, message) -> None:
    with pytest.raises(RepositoryError, match=re.escape(message)):
        triton_repo.config_text(name, 256, batching)


def test_a_checked_repository_is_published_once_and_not_rebuilt(repository) -> None:
    repo, result = repository
    assert result["reused"] is False
    marker = json.loads((repo / "gpt" / "CHECKED").read_text())
    assert marker["onnx_bytes"] == (repo / "gpt" / "1" / "model.onnx").stat().st_size
    model = repo.parent / "model"
    again = triton_env.last_json(triton_env.run(
        "-m", "trainers.serving.triton_package", str(model), str(repo), "--max-batch-size", "16",
        "--preferred", "4", "16", "--max-queue-delay-us", "500", "--check").stdout)
    assert again["reused"] is True and again["max_abs_diff"] == result["max_abs_diff"]


def test_a_repository_is_published_to_an_object_store(tmp_path) -> None:
    # memory:// is fsspec's object store in one process, as gs:// is gcsfs's: no rename, the
    # marker last. The packaging job of a triton model writes gs:// this way on Vertex.
    model = export_model(tmp_path / "model")
    script = (
        "import json, sys, fsspec\n"
        "from trainers.serving import triton_package\n"
        "assert triton_package.main([sys.argv[1], 'memory://bucket/m/triton', '--check']) == 0\n"
        "fs = fsspec.filesystem('memory')\n"
        "names = sorted(p.split('/triton/', 1)[1] for p in fs.find('memory://bucket/m/triton'))\n"
        "code = triton_package.main([sys.argv[1], 'memory://bucket/m/triton', '--check'])\n"
        "print(json.dumps({'names': names, 'again': code}))\n")
    done = triton_env.run("-c", script, str(model))
    lines = [json.loads(line) for line in done.stdout.strip().splitlines()]
    assert lines[-1] == {"names": [
        "gpt/1/model.onnx", "gpt/CHECKED", "gpt/config.pbtxt",
        "gpt_generate/1/model.py", "gpt_generate/1/prediction.py", "gpt_generate/config.pbtxt",
        "gpt_step/1/model.onnx", "gpt_step/config.pbtxt"], "again": 0}
    assert lines[0]["reused"] is False and lines[1]["reused"] is True


def test_an_object_store_repository_is_written_only_checked(tmp_path) -> None:
    model = export_model(tmp_path / "model")
    done = triton_env.run("-m", "trainers.serving.triton_package", str(model),
                          "memory://bucket/m/triton", check=False)
    assert done.returncode == 2
    error = json.loads(done.stderr.strip().splitlines()[-1])
    assert error["severity"] == "ERROR" and "only checked (--check)" in error["error"]


def test_the_local_twin_runs_onnx_models_in_python_and_keeps_python_models(tmp_path) -> None:
    """Where tritonserver has no onnxruntime backend (PyTriton's has none), triton_local serves
    each ONNX model of the repository through the Python backend and the rest as they are."""
    from trainers.serving import triton_local

    repo = tmp_path / "repo"
    for name, first_line in (("gpt", 'platform: "onnxruntime_onnx"'),
                             ("gpt_generate", 'backend: "python"')):
        (repo / name / "1").mkdir(parents=True)
        (repo / name / "config.pbtxt").write_text(f'name: "{name}"\n{first_line}\n')
        (repo / name / "1" / ("model.onnx" if name == "gpt" else "model.py")).write_text(name)
    twin = Path(triton_local.python_twin(str(repo), str(tmp_path / "twin")))
    assert (twin / "gpt" / "config.pbtxt").read_text() == 'name: "gpt"\nbackend: "python"\n'
    assert (twin / "gpt" / "1" / "model.onnx").read_text() == "gpt"
    assert "TritonPythonModel" in (twin / "gpt" / "1" / "model.py").read_text()
    assert (twin / "gpt_generate" / "config.pbtxt").read_text() == \
        (repo / "gpt_generate" / "config.pbtxt").read_text()
    assert (twin / "gpt_generate" / "1" / "model.py").read_text() == "gpt_generate"
    with pytest.raises(RepositoryError, match="no model folder"):
        triton_local.python_twin(str(tmp_path / "twin" / "gpt" / "1"), str(tmp_path / "t2"))
