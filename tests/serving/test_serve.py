"""trainers/serve.py and trainers/serving/: loading what training wrote, batched generation,
the batcher, and Vertex's custom-container HTTP contract."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import torch

from config.ports import reserve_port
from contract import prediction
from tests.serving.models import ddp_checkpoint, export_model
from trainers.serving import generate, loader
from trainers.serving.batcher import Batcher
from trainers.serving.http import PredictionServer

pytestmark = pytest.mark.trainers

REPO = Path(__file__).resolve().parents[2]


def test_loads_an_export_and_a_ddp_checkpoint(tmp_path: Path) -> None:
    exported = loader.load(str(export_model(tmp_path / "model", step=60)))
    assert exported.step == 60 and exported.params > 0
    checkpoint = loader.load(str(ddp_checkpoint(tmp_path / "step-00000030", step=30)))
    assert checkpoint.step == 30
    with pytest.raises(loader.ModelLoadError, match=r"no torch\.distributed\.checkpoint metadata"):
        loader.load(str(ddp_checkpoint(tmp_path / "step-00000040", step=40, fmt="dcp")))
    with pytest.raises(loader.ModelLoadError, match="not found"):
        loader.load(str(tmp_path / "empty"))


def test_a_batch_generates_what_each_instance_gets_alone(tmp_path: Path) -> None:
    model = loader.load(str(export_model(tmp_path / "m", block_size=16))).model
    instances = prediction.parse_instances(
        ["def ", {"prompt": "import os\nimport sys\n", "max_tokens": 3}, ""],
        {"max_tokens": 20})
    assert [i.max_tokens for i in instances] == [20, 3, 20]
    done: list[int] = []
    together = generate.generate(model, instances, lambda i, _: done.append(i))
    alone = [generate.generate(model, [i])[0] for i in instances]
    assert together == alone
    assert done[0] == 1, "the short instance is answered before the long ones finish"
    assert [p["tokens"] for p in together] == [20, 3, 20]
    seeded = prediction.parse_instances([{"prompt": "a", "temperature": 1.0, "seed": 7}], None)
    assert generate.generate(model, seeded) == generate.generate(model, seeded)


@pytest.mark.parametrize(("instances", "parameters", "message"), [
    ([], None, "non-empty list"),
    ([3], None, "string or an object"),
    ([{"prompt": "x", "max_tokens": 0}], None, "max_tokens"),
    ([{"prompt": "x", "top_k": 1}], None, "unknown keys"),
    (["x"], [1], "parameters: an object"),
])
def test_bad_instances_are_refused(instances: Any, parameters: Any, message: str) -> None:
    with pytest.raises(prediction.BadInstance, match=message):
        prediction.parse_instances(instances, parameters)


def test_requests_queued_while_the_model_runs_share_the_next_batch() -> None:
    running = threading.Event()
    release = threading.Event()
    sizes: list[int] = []

    def run(items: list[int], done: Any) -> None:
        sizes.append(len(items))
        running.set()
        release.wait(10)
        for i, item in enumerate(items):
            done(i, item * 10)

    batcher: Batcher[int] = Batcher(run, max_batch=8)
    first = batcher.submit([1])
    running.wait(10)
    later = [batcher.submit([n, n]) for n in range(2, 7)]  # 10 items: 8 fit in one batch
    release.set()
    assert first.result(10) == [10]
    assert [f.result(10) for f in later] == [[n * 10, n * 10] for n in range(2, 7)]
    assert sizes == [1, 8, 2]
    batcher.close()


def _post(url: str, body: Any) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_http_contract(tmp_path: Path) -> None:
    model = loader.load(str(export_model(tmp_path / "m"))).model
    batcher: Batcher[prediction.Instance] = Batcher(
        lambda items, done: generate.generate(model, items, done))
    server = PredictionServer(("127.0.0.1", 0), batcher, "/ping", "/v1/predict", {"step": 60})
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        with urllib.request.urlopen(base + "/ping", timeout=10) as response:
            assert response.status == 200 and json.loads(response.read())["step"] == 60
        status, body = _post(base + "/v1/predict",
                             {"instances": ["a", {"prompt": "b", "max_tokens": 2}]})
        assert status == 200 and [p["tokens"] for p in body["predictions"]] == [16, 2]
        assert _post(base + "/v1/predict", {"instances": "x"})[0] == 400
        assert _post(base + "/predict", {"instances": ["x"]})[0] == 404
    finally:
        server.shutdown()
        server.server_close()
        batcher.close()


def _serve(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "trainers.serve", "--host", "127.0.0.1",
                             *args], cwd=REPO, env={**os.environ, **env}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _wait_healthy(proc: subprocess.Popen[str], url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            assert time.monotonic() < deadline, f"the server never became healthy at {url}"
            time.sleep(0.3)


def test_the_entrypoint_follows_the_aip_environment(tmp_path: Path) -> None:
    port = reserve_port()
    proc = _serve({"AIP_HTTP_PORT": str(port), "AIP_HEALTH_ROUTE": "/h",
                   "AIP_PREDICT_ROUTE": "/p", "AIP_STORAGE_URI": str(export_model(tmp_path / "m"))},
                  "--threads", "1")
    try:
        _wait_healthy(proc, f"http://127.0.0.1:{port}/h", timeout_s=60)
        status, body = _post(f"http://127.0.0.1:{port}/p", {"instances": ["hi"]})
        assert status == 200 and len(body["predictions"]) == 1
    finally:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=30)
    assert proc.returncode == 0
    events = [json.loads(line)["event"] for line in output.splitlines() if line.startswith("{")]
    assert events == ["serving_started", "serving_stopped"]


def test_an_unloadable_model_exits_2(tmp_path: Path) -> None:
    proc = _serve({"AIP_STORAGE_URI": str(tmp_path / "nothing")}, "--port", "0")
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "serving_failed" in output


REQUEST = {"instances": ["def main():\n    ", {"prompt": "import os\n", "max_tokens": 5},
                        {"prompt": "x", "temperature": 1.0, "seed": 3}]}


def _serve_once(folder: Path, runtime: str) -> tuple[list[dict], dict, list[dict]]:
    """Start the entrypoint on ``folder`` in ``runtime``, answer REQUEST once, stop it: its
    predictions, its serving_started event and every event it printed, in order."""
    port = reserve_port()
    proc = _serve({"AIP_STORAGE_URI": str(folder)}, "--port", str(port), "--runtime", runtime)
    try:
        # Healthy only once compiled: the first answer is then as quick as any other.
        _wait_healthy(proc, f"http://127.0.0.1:{port}/health", timeout_s=300)
        status, body = _post(f"http://127.0.0.1:{port}/predict", REQUEST)
        assert status == 200, body
    finally:
        proc.send_signal(signal.SIGTERM)
        output, _ = proc.communicate(timeout=60)
    said = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    [started] = [e for e in said if e["event"] == "serving_started"]
    return body["predictions"], started, said


def _runtime_lines(said: list[dict]) -> list[str]:
    """What the runtime said while it was prepared, before the server started answering."""
    before = said[:[e["event"] for e in said].index("serving_started")]
    return [e["message"] for e in before if e["event"] == "serving_runtime"]


def _eager_answers(folder: Path) -> list[dict]:
    model = loader.load(str(folder)).model
    return generate.generate(model, prediction.parse_instances(REQUEST["instances"], None))


def test_the_compiled_runtime_answers_as_eager_does_and_compiles_before_serving(
        tmp_path: Path) -> None:
    folder = export_model(tmp_path / "m")
    predictions, started, said = _serve_once(folder, "compiled")
    assert predictions == _eager_answers(folder)
    assert started["runtime"] == "compiled" and started["compiled_at_start"] is True
    # The warm-up compiled every shape it runs through before serving_started, after which
    # the server answers its health route: no request waits for a compilation.
    assert _runtime_lines(said) == ["compiled for 1 instance(s)", "compiled for 3 instance(s)"]
    assert not [e for e in said[said.index(started):] if e["event"] == "serving_runtime"]


def test_the_aot_package_is_built_once_kept_beside_the_weights_and_never_served_stale(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both ways a package is made, each compiled once (an AOTInductor build is the costliest
    thing this file does): the first replica of a model without one builds and stores it, and
    the packaging job builds one where the stored package is another model's (which a replica
    then loads as the second replica above loaded the first's)."""
    from trainers.serving import aot, aot_package
    from trainers.storage import storage_for

    folder = export_model(tmp_path / "m")
    first, built, said = _serve_once(folder, "aot")
    assert first == _eager_answers(folder) and built["compiled_at_start"] is True
    [package] = (folder / aot.PACKAGE_FOLDER).iterdir()
    assert _runtime_lines(said) == [f"built and stored the AOTInductor package {package}"]
    built_at = package.stat().st_mtime_ns
    # The next replica loads the package: nothing compiled, the same answers.
    second, loaded, said = _serve_once(folder, "aot")
    assert second == first and loaded["compiled_at_start"] is False
    assert _runtime_lines(said) == [f"loaded the AOTInductor package {package}"]
    # A retried packaging job keeps the package that answers as the weights do.
    assert aot_package.main([str(folder), "--device", "cpu"]) == 0
    kept = json.loads(capsys.readouterr().out)
    assert kept["built"] is False and kept["package"] == str(package)
    assert package.stat().st_mtime_ns == built_at

    # Another model's package beside these weights: never loaded, neither by a replica (the
    # check at load) nor by the packaging job, which builds this model's own.
    other = export_model(tmp_path / "other", seed=2)
    model = loader.load(str(other)).model
    stale = aot.package_path(storage_for(str(other)), str(other), torch.device("cpu"))
    Path(stale).parent.mkdir(parents=True)
    Path(stale).write_bytes(package.read_bytes())
    assert aot.load_stored(model, storage_for(str(other)), stale) is None
    assert aot_package.main([str(other), "--device", "cpu"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["built"] is True and done["device"] == "cpu" and done["package"] == stale
    packaged = aot.load_stored(model, storage_for(str(other)), stale)
    assert packaged is not None
    probe = torch.randint(0, 256, (2, 9))
    with torch.inference_mode():
        torch.testing.assert_close(packaged(probe)[0], model(probe)[0], rtol=1e-4, atol=1e-4)


def test_the_aot_packaging_job_fails_with_one_error_line_naming_the_cause(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trainers.serving import aot_package

    (tmp_path / "empty").mkdir()
    assert aot_package.main([str(tmp_path / "empty"), "--device", "cpu"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    error = json.loads(line)
    assert error["severity"] == "ERROR" and error["message"].startswith("aot package: ")
    assert str(tmp_path / "empty") in error["message"]


def test_an_unknown_runtime_is_refused() -> None:
    from trainers.serving import runtimes

    with pytest.raises(ValueError, match="one of eager, compiled, aot"):
        runtimes.prepare(torch.nn.Linear(1, 1), "tensorrt-ish")
