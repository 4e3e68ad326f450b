"""The tensorrt runtime's repository: its config (platform tensorrt_plan, the ONNX repository's
tensors and batching) passes Triton's own ModelConfig proto, and where TensorRT is missing the
engine build fails at once with an ERROR line naming what it needs. (Nothing here has a GPU:
the engine itself is built by the packaging job on one.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.trainers import triton_env
from tests.trainers.test_triton_repo import export_model
from trainers.serving import tensorrt_repo
from trainers.serving.tensorrt_repo import EngineSettings
from trainers.serving.triton_repo import Batching, RepositoryError

# Runs in .venv/triton (`make envs`; tests/trainers/triton_env.py builds it when missing).
pytestmark = pytest.mark.environment

ROOT = Path(__file__).resolve().parents[2]
PARSE = """
import json, sys
from google.protobuf import json_format
from trainers.serving import tensorrt_repo, triton_check
from trainers.serving.triton_repo import Batching

text = tensorrt_repo.config_text("gpt", 256, Batching(16, (4, 16), 500))
if len(sys.argv) > 1:
    text = text.replace(*json.loads(sys.argv[1]))
config = triton_check.parse_config(text, "gpt/config.pbtxt")
print(json.dumps(json_format.MessageToDict(config, preserving_proto_field_name=True)))
"""


def test_the_engine_config_passes_tritons_schema_with_the_onnx_repositorys_tensors() -> None:
    config = triton_env.last_json(triton_env.run("-c", PARSE).stdout)
    assert config["platform"] == "tensorrt_plan"
    assert config["max_batch_size"] == 16
    assert config["input"] == [{"name": "tokens", "data_type": "TYPE_INT64", "dims": ["-1"]}]
    assert config["output"] == [{"name": "logits", "data_type": "TYPE_FP32",
                                 "dims": ["-1", "256"]}]
    assert config["dynamic_batching"] == {"preferred_batch_size": [4, 16],
                                          "max_queue_delay_microseconds": "500"}
    assert config["version_policy"] == {"specific": {"versions": ["1"]}}  # int64: a JSON string


def test_a_config_triton_would_refuse_is_refused_by_the_same_proto() -> None:
    done = triton_env.run("-c", PARSE, json.dumps(["tensorrt_plan\"", "tensorrt_plan\"\nplan: 1"]),
                          check=False)
    assert done.returncode != 0
    assert 'has no field named "plan"' in done.stderr


def test_fp16_is_the_default_and_int8_is_refused_without_calibration(tmp_path: Path) -> None:
    assert EngineSettings().precision == "fp16"
    with pytest.raises(RepositoryError, match="int8 needs calibration"):
        EngineSettings("int8").check()
    with pytest.raises(RepositoryError, match="no such file"):
        EngineSettings("int8", str(tmp_path / "missing.cache")).check()
    with pytest.raises(RepositoryError, match="int8 only"):
        EngineSettings("fp16", str(tmp_path / "missing.cache")).check()
    with pytest.raises(RepositoryError, match="precision 'bf8'"):
        EngineSettings("bf8").check()
    cache = tmp_path / "calibration.cache"
    cache.write_bytes(b"TRT-100500-EntropyCalibration2\n")
    EngineSettings("int8", str(cache)).check()


def test_the_config_text_is_the_onnx_ones_with_the_plan_platform() -> None:
    text = tensorrt_repo.config_text("gpt", 256, Batching())
    assert 'platform: "tensorrt_plan"' in text and "onnxruntime" not in text
    with pytest.raises(RepositoryError, match="model name"):
        tensorrt_repo.config_text("../gpt", 256, Batching())


def test_the_build_step_without_tensorrt_fails_with_what_it_needs(tmp_path: Path) -> None:
    model = export_model(tmp_path / "model")
    done = subprocess.run([sys.executable, "-m", "trainers.serving.triton_package", str(model),
                           str(tmp_path / "repo"), "--engine", "tensorrt", "--check"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    line = json.loads(done.stderr.strip().splitlines()[-1])
    assert line["severity"] == "ERROR"
    assert line["message"].startswith("tensorrt engine: building a TensorRT engine needs")
    assert "import tensorrt" in line["message"] and "GPU machine" in line["message"]
    assert "nvcr.io/nvidia/tensorrt" in line["message"]
    assert not (tmp_path / "repo").exists()  # nothing half-built
