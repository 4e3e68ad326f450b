"""A triton model served by the emulator and predicted through the control plane's own backend:
the repository triton_repo generates, uploaded with the container registry.py gives a triton
entry (`tritonserver --vertex-ai-default-model=gpt_generate`, Triton's routes), deployed (the
emulator starts the tritonserver PyTriton bundles, in Vertex mode, from the Triton environment),
and asked through rawPredict in KServe v2 JSON: a 64-byte generation is one rawPredict (the
loop runs inside Triton), and its greedy bytes are the eager model's."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from controlplane.backends import serving_base
from controlplane.backends.serving import VertexServing
from controlplane.serving import predictions, registry, triton_kserve
from tests.localvertex.helpers import FAST_FLAGS, EmulatorProcess
from tests.serving.models import export_model
from tests.trainers import triton_env

pytestmark = pytest.mark.trainers

ARTIFACT = "gs://bucket/jobs/job-1/model"
PROMPTS = [{"prompt": "def ", "max_tokens": 64}, {"prompt": "import os", "max_tokens": 3}]


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorProcess]:
    data = tmp_path_factory.mktemp("triton-serving") / "data"
    model = export_model(data / "gcs" / "bucket" / "jobs" / "job-1" / "model", seed=5)
    # What the packaging job writes beside the weights (without its checks, done elsewhere).
    triton_env.run("-m", "trainers.serving.triton_package", str(model),
                   str(model / registry.TRITON_REPOSITORY))
    emu = EmulatorProcess(data, FAST_FLAGS)
    emu.start()
    yield emu
    emu.stop()


@pytest.fixture
def backend(emulator: EmulatorProcess, settings: Any) -> Iterator[VertexServing]:
    settings.VERTEX_EMULATOR_ADDR = emulator.address
    settings.VERTEX_EMULATOR_TOKEN = emulator.token
    serving_base.get_serving_backend.cache_clear()
    yield VertexServing()
    serving_base.get_serving_backend.cache_clear()


def _wait(backend: VertexServing, name: str, timeout_s: float = 300.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        op = backend.get_operation(name)
        if op.done:
            assert not op.failed, op.error_message
            return
        time.sleep(0.5)
    raise AssertionError(f"{name} not done in {timeout_s} s")


def _eager(folder: Any) -> list[dict[str, Any]]:
    import torch

    from contract import prediction
    from trainers.serving import generate, loader

    model = loader.load(str(folder)).model
    # One torch thread: two spinning for two CPUs the suite keeps busy cost seconds.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return generate.generate(model, prediction.parse_instances(PROMPTS, None))
    finally:
        torch.set_num_threads(threads)


def test_a_triton_deployment_answers_the_eager_model_s_greedy_bytes_in_one_call(
        backend: VertexServing, emulator: EmulatorProcess,
        monkeypatch: pytest.MonkeyPatch) -> None:
    container = serving_base.Container(
        image_uri="us-docker.pkg.dev/p/serving/tritonserver:24.09-py3",
        command=list(registry.TRITON_COMMAND), args=list(registry.TRITON_ARGS),
        predict_route=registry.TRITON_PREDICT_ROUTE, health_route=registry.TRITON_HEALTH_ROUTE)
    op = backend.upload_model("gpt-triton", "gpt-triton",
                              f"{ARTIFACT}/{registry.TRITON_REPOSITORY}", container, {})
    if not op.done:
        _wait(backend, op.name)
    _wait(backend, backend.create_endpoint("cp-ep-triton", "triton", {}).name)
    endpoint = backend.endpoint_name("cp-ep-triton")
    spec = serving_base.DeploySpec(deployed_model_id="21",
                                   model_name=backend.model_name("gpt-triton"),
                                   display_name="gpt-triton", machine_type="n1-standard-4")
    _wait(backend, backend.deploy_model(endpoint, spec, {"0": 100}).name)

    calls: list[str] = []
    raw_predict = backend.raw_predict

    def counted(name: str, body: bytes, **kwargs: Any) -> serving_base.RawPredictResult:
        calls.append(name)
        return raw_predict(name, body, **kwargs)

    monkeypatch.setattr(backend, "raw_predict", counted)
    result = predictions.proxy(backend, endpoint, triton_kserve.parse_instances(PROMPTS, None),
                               timeout_s=120)
    # Both generations, 64 bytes and 3, in one call from the control plane to the endpoint.
    assert calls == [endpoint]
    assert [p["tokens"] for p in result.predictions] == [64, 3]
    assert result.predictions == _eager(emulator.data_dir / "gcs" / "bucket" / "jobs" /
                                        "job-1" / "model")
    # The deployed model that served it, read from the rawPredict call's metadata.
    assert result.deployed_model_id == "21"


def test_a_deployment_timeout_reaches_the_model_registry(backend: VertexServing) -> None:
    """The compiled runtime's longer deployment timeout (registry.container_for) is sent as
    containerSpec.deploymentTimeout and kept with the model; unset, the model has none."""
    for model_id, seconds in (("with-timeout", 1800), ("without-timeout", 0)):
        container = serving_base.Container(image_uri="us-docker.pkg.dev/p/serve:1",
                                           command=["python", "-m", "trainers.serve"],
                                           deployment_timeout_s=seconds)
        op = backend.upload_model(model_id, model_id, ARTIFACT, container, {})
        if not op.done:
            _wait(backend, op.name)
        spec = backend.models.get_model(name=backend.model_name(model_id)).container_spec
        assert spec.deployment_timeout.total_seconds() == seconds
