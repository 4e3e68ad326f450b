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

from tests.serving.models import ddp_checkpoint, export_model

pytestmark = pytest.mark.trainers
torch = pytest.importorskip("torch")

from trainers.serving import generate, loader  # noqa: E402
from trainers.serving.batcher import Batcher  # noqa: E402
from trainers.serving.http import PredictionServer  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def test_loads_an_export_and_a_ddp_checkpoint(tmp_path: Path) -> None:
    exported = loader.load(str(export_model(tmp_path / "model", step=60)))
    assert exported.step == 60 and exported.params > 0
    checkpoint = loader.load(str(ddp_checkpoint(tmp_path / "step-00000030", step=30)))
    assert checkpoint.step == 30
    with pytest.raises(loader.ModelLoadError, match="'dcp' checkpoint"):
        loader.load(str(ddp_checkpoint(tmp_path / "step-00000040", step=40, fmt="dcp")))
    with pytest.raises(loader.ModelLoadError, match="not found"):
        loader.load(str(tmp_path / "empty"))


def test_a_batch_generates_what_each_instance_gets_alone(tmp_path: Path) -> None:
    model = loader.load(str(export_model(tmp_path / "m", block_size=16))).model
    instances = generate.parse_instances(
        ["def ", {"prompt": "import os\nimport sys\n", "max_tokens": 3}, ""],
        {"max_tokens": 20})
    assert [i.max_tokens for i in instances] == [20, 3, 20]
    done: list[int] = []
    together = generate.generate(model, instances, lambda i, _: done.append(i))
    alone = [generate.generate(model, [i])[0] for i in instances]
    assert together == alone
    assert done[0] == 1, "the short instance is answered before the long ones finish"
    assert [p["tokens"] for p in together] == [20, 3, 20]
    seeded = generate.parse_instances([{"prompt": "a", "temperature": 1.0, "seed": 7}], None)
    assert generate.generate(model, seeded) == generate.generate(model, seeded)


@pytest.mark.parametrize(("instances", "parameters", "message"), [
    ([], None, "non-empty list"),
    ([3], None, "string or an object"),
    ([{"prompt": "x", "max_tokens": 0}], None, "max_tokens"),
    ([{"prompt": "x", "top_p": 1}], None, "unknown keys"),
    (["x"], [1], "'parameters' must be an object"),
])
def test_bad_instances_are_refused(instances: Any, parameters: Any, message: str) -> None:
    with pytest.raises(generate.BadInstance, match=message):
        generate.parse_instances(instances, parameters)


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
    batcher: Batcher[generate.Instance] = Batcher(
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


def test_the_entrypoint_follows_the_aip_environment(tmp_path: Path) -> None:
    from localvertex.environment import free_ports

    port = free_ports(1)[0]
    proc = _serve({"AIP_HTTP_PORT": str(port), "AIP_HEALTH_ROUTE": "/h",
                   "AIP_PREDICT_ROUTE": "/p", "AIP_STORAGE_URI": str(export_model(tmp_path / "m"))},
                  "--threads", "1")
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/h", timeout=2):
                    break
            except OSError:
                assert time.monotonic() < deadline, "the server never became healthy"
                time.sleep(0.2)
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
