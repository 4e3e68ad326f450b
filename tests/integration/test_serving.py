"""Serving the real way: a job trains on the emulator, its checkpoint is registered and deployed
to an endpoint whose replicas run trainers.serve, the prober's samples fill the latency series
and the charts render; slowing the endpoint on purpose breaches its SLO, which posts exactly one
Slack message, and its recovery exactly one more.

The stack is this module's own, so its Slack webhook posts can go to a recorder here.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from config.devstack import Stack
from localvertex.admin.client import AdminClient
from tests.integration.test_end_to_end import browser_session
from tests.stacks import Api, prepared_config, running

pytestmark = pytest.mark.integration

# A warm probe takes tens of milliseconds on an idle machine, a cold one (a new gRPC channel,
# the replica's first forward pass) about 0.6 s, and seconds when other work saturates the
# CPUs. The target sits above that and far below the slowed endpoint; a probe queued behind
# the test's own generations on a saturated machine can still pass it (9 s seen in a full
# run), so the alerts are counted from the slowdown on (step 5).
SLO = {"p95_ms": 4000, "error_rate": 0.5, "window_s": 20, "min_samples": 3}
SLOW_MS = 7000


class SlackRecorder(ThreadingHTTPServer):
    """Answers Slack webhook posts with 200 "ok" and keeps their JSON bodies."""

    daemon_threads = True

    def __init__(self) -> None:
        self.posts: list[dict[str, Any]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                recorder.posts.append(json.loads(body or b"{}"))
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args: Any) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}/"


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackRecorder]:
    recorder = SlackRecorder()
    threading.Thread(target=recorder.serve_forever, daemon=True).start()
    yield recorder
    recorder.shutdown()


@pytest.fixture(scope="module")
def serving_stack(postgres_url: str, redis_url: str, slack: SlackRecorder,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    config, name = prepared_config(
        postgres_url, redis_url, tmp_path_factory, "cp_serving",
        extra_env={"CP_RESUBMIT_AFTER_S": "10", "CP_SLACK_WEBHOOK_BASE_URL": slack.url,
                   "CP_PROBE_TICK_S": "0.5"})
    with running(Stack(config), postgres_url, name) as stack:
        yield stack


def wait(stack: Stack, what: str, check: Callable[[], Any], timeout_s: float = 120) -> Any:
    deadline = time.monotonic() + timeout_s
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        dead = stack.dead()
        assert not dead, f"stack processes died: {dead}\n" + "\n".join(
            stack.log_tail(n) for n in dead)
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}; last seen: {str(last)[:1500]}"
                         f"\n--- worker ---\n{stack.log_tail('worker', 60)}"
                         f"\n--- emulator ---\n{stack.log_tail('emulator', 30)}")


def train(stack: Stack, api: Api, body: dict[str, Any]) -> int:
    """Submit a training job and wait for it to succeed; its id."""
    response = api.post("/api/v1/jobs/", body)
    assert response.status_code == 201, response.text
    job_id = response.json()["id"]
    job = wait(stack, f"job {body['name']} to end", lambda: (lambda j: j if j["state"] in (
        "SUCCEEDED", "FAILED", "CANCELLED") else None)(api.get(f"/api/v1/jobs/{job_id}/")),
        timeout_s=300)
    assert job["state"] == "SUCCEEDED", job["error_message"]
    return job_id


def test_train_deploy_measure_and_alert(serving_stack: Stack, slack: SlackRecorder) -> None:
    stack = serving_stack
    seeded = json.loads(stack.manage("seed_demo", "--username", "sam", "--team", "serving",
                                     capture=True))
    api = Api(stack.web_url, seeded["token"])
    team = seeded["team"]
    response = api.post(f"/api/v1/teams/{team}/channels/", {
        "name": "ml-alerts", "kind": "webhook", "notify_on": ["failed"],
        "webhook_url": "https://hooks.slack.com/services/T000/B000/serving"})
    assert response.status_code == 201, response.text

    # 1. A small model trains on the emulator and saves checkpoints.
    job_id = train(stack, api, {
        "name": "gpt-to-serve", "strategy": "ddp", "chief": {"machine_type": "n1-standard-4"},
        "args": ["--preset", "tiny", "--steps", "40", "--checkpoint-every", "20"]})
    steps = wait(stack, "the checkpoint events", lambda: (lambda s: s if 40 in s else None)(
        api.get(f"/api/v1/serving/jobs/{job_id}/")["checkpoint_steps"]))
    assert steps == [20, 40]

    # 2. Its checkpoint becomes a registry entry, uploaded to the Model Registry.
    response = api.post("/api/v1/serving/models/", {"job": job_id, "step": 40})
    assert response.status_code == 201, response.text
    model_id = response.json()["id"]
    entry = wait(stack, "the upload", lambda: (lambda m: m if m["state"] != "UPLOADING" else None)(
        api.get(f"/api/v1/serving/models/{model_id}/")))
    assert entry["state"] == "READY", entry["error_message"]
    assert entry["artifact_uri"].endswith(f"/job-{job_id}/checkpoints/step-00000040")

    # 3. An endpoint, probed every second, with an SLO; the model deployed to it.
    response = api.post("/api/v1/serving/endpoints/", {"name": "gpt-prod",
                                                       "probe_interval_s": 1})
    assert response.status_code == 201, response.text
    endpoint_id = response.json()["id"]
    wait(stack, "the endpoint", lambda: api.get(
        f"/api/v1/serving/endpoints/{endpoint_id}/")["state"] == "READY")
    response = api.session.put(f"{api.base}/api/v1/serving/endpoints/{endpoint_id}/slo/",
                               json=SLO, timeout=30)
    assert response.status_code == 200, response.text
    response = api.post(f"/api/v1/serving/endpoints/{endpoint_id}/deployments/", {
        "model": model_id, "machine_type": "n1-standard-4", "min_replicas": 1,
        "max_replicas": 2, "autoscaling_metric": "cpu", "autoscaling_target": 60})
    assert response.status_code == 201, response.text
    deployment = wait(stack, "the deployment", lambda: (
        lambda d: d if d["state"] in ("DEPLOYED", "FAILED") else None)(
        api.get(f"/api/v1/serving/deployments/{response.json()['id']}/")))
    assert deployment["state"] == "DEPLOYED", deployment["error_message"]
    assert deployment["available_replicas"] == 1

    response = api.post(f"/api/v1/serving/endpoints/{endpoint_id}/predict/",
                        {"instances": [{"prompt": "def ", "max_tokens": 5}]})
    assert response.status_code == 200, response.text
    assert response.json()["predictions"][0]["tokens"] == 5
    openai_through_the_control_plane(stack, api, seeded["token"], endpoint_id)

    # 4. The prober's samples fill the latency series; the charts render.
    wait(stack, "probe samples", lambda: api.get(
        f"/api/v1/serving/endpoints/{endpoint_id}/samples/")["count"] >= 6)
    latency = api.get(f"/api/v1/serving/endpoints/{endpoint_id}/latency/", minutes=10)
    assert sum(latency["probe"]["samples"]) >= 6
    assert any(v is not None for v in latency["probe"]["p95"])
    assert latency["slo"]["p95_ms"] == SLO["p95_ms"]
    assert latency["slo"]["status"] == "OK", api.get(
        f"/api/v1/serving/endpoints/{endpoint_id}/samples/")
    session = browser_session(stack, seeded["username"], seeded["password"])
    page = session.get(f"{stack.web_url}/serving/endpoints/{endpoint_id}/", timeout=10)
    assert page.status_code == 200 and 'class="chart latency-chart"' in page.text
    panel = session.get(f"{stack.web_url}/serving/jobs/{job_id}/panel/", timeout=10)
    assert panel.status_code == 200 and "gpt-prod" in panel.text
    for_job = session.get(f"{stack.web_url}/serving/jobs/{job_id}/latency.json", timeout=10)
    assert sum(for_job.json()["endpoints"][0]["probe"]["samples"]) >= 6

    # 5. Slowed on purpose: one breach alert on Slack, however long the breach lasts. Counted
    # from here: on a saturated machine a probe queued behind the generations above can take
    # seconds, and a breach and recovery of its own before this point are the SLO working.
    alerts_url = f"/api/v1/serving/endpoints/{endpoint_id}/alerts/"
    samples_url = f"/api/v1/serving/endpoints/{endpoint_id}/samples/"
    slo_url = f"/api/v1/serving/endpoints/{endpoint_id}/slo/"
    wait(stack, "the SLO to hold, every alert so far on Slack", lambda: api.get(slo_url)[
        "status"] == "OK" and len(slack.posts) == len(api.get(alerts_url)["results"]))
    before, earlier = len(slack.posts), len(api.get(alerts_url)["results"])
    with AdminClient(stack.emulator_admin_addr, stack.emulator_token) as admin:
        admin.set_endpoint_latency(f"cp-ep-{endpoint_id}", SLOW_MS)
        wait(stack, "the breach alert on Slack", lambda: len(slack.posts) >= before + 1)
        seen = api.get(samples_url)["count"]
        wait(stack, "more slow probes", lambda: api.get(samples_url)["count"] >= seen + 2)
        assert len(slack.posts) == before + 1
        assert "SLO breached on endpoint gpt-prod" in slack.posts[before]["text"]
        alerts = api.get(alerts_url)["results"]  # newest first
        assert len(alerts) == earlier + 1 and alerts[0]["kind"] == "BREACH"
        assert api.get(slo_url)["status"] == "BREACHED"

        # 6. Back to normal: one recovery alert.
        admin.set_endpoint_latency(f"cp-ep-{endpoint_id}", 0)
        wait(stack, "the recovery alert on Slack", lambda: len(slack.posts) >= before + 2)
    seen = api.get(samples_url)["count"]
    wait(stack, "more fast probes", lambda: api.get(samples_url)["count"] >= seen + 4)
    assert len(slack.posts) == before + 2
    assert "SLO recovered on endpoint gpt-prod" in slack.posts[before + 1]["text"]
    alerts = api.get(alerts_url)["results"]
    assert len(alerts) == earlier + 2
    assert [a["kind"] for a in alerts[:2]] == ["RECOVERY", "BREACH"]
    assert {a["delivery"] for a in alerts} == {"SENT"}

    # 7. Undeploy and delete: the replicas stop and the endpoint goes.
    response = api.session.delete(f"{api.base}/api/v1/serving/endpoints/{endpoint_id}/",
                                  timeout=30)
    assert response.status_code == 202, response.text
    wait(stack, "the endpoint to be deleted", lambda: api.get(
        f"/api/v1/serving/endpoints/{endpoint_id}/")["state"] == "DELETED")


def openai_through_the_control_plane(stack: Stack, api: Api, token: str,
                                     endpoint_id: int) -> None:
    """The `openai` client pointed at the endpoint through the control plane, the API token as
    its api_key (sent as Bearer): chat (through Vertex's ChatCompletions) and completions
    (through Predict), whole and streamed, greedy text equal to the predict route's; a
    refusal in OpenAI's shape naming the field; another team's token refused."""
    import openai

    base_url = f"{stack.web_url}/api/v1/serving/endpoints/{endpoint_id}/openai/v1"
    client = openai.OpenAI(base_url=base_url, api_key=token, max_retries=0, timeout=60)

    def predicted(prompt: str) -> str:
        response = api.post(f"/api/v1/serving/endpoints/{endpoint_id}/predict/",
                            {"instances": [{"prompt": prompt, "max_tokens": 10}]})
        assert response.status_code == 200, response.text
        return response.json()["predictions"][0]["text"]

    [model] = client.models.list().data
    completion = client.completions.create(model=model.id, prompt="def ", max_tokens=10,
                                           temperature=0)
    assert completion.choices[0].text == predicted("def ")
    streamed = list(client.completions.create(model=model.id, prompt="def ", max_tokens=10,
                                              temperature=0, stream=True))
    assert "".join(c.choices[0].text for c in streamed) == completion.choices[0].text

    messages = [{"role": "user", "content": "import"}]
    chat = client.chat.completions.create(model=model.id, messages=messages, max_tokens=10,
                                          temperature=0)
    text = chat.choices[0].message.content
    assert text == predicted("user: import\nassistant: ")  # the model server's chat layout
    chunks = list(client.chat.completions.create(model=model.id, messages=messages,
                                                 max_tokens=10, temperature=0, stream=True))
    assert len(chunks) > 2  # a chunk a decoding step, not the answer at the end
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == text

    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(model=model.id, messages=messages, max_tokens=100_000)
    assert refused.value.body["param"] == "max_tokens"
    assert "from 1 to 512" in refused.value.body["message"]

    other = json.loads(stack.manage("seed_demo", "--username", "otto", "--team", "elsewhere",
                                    capture=True))
    stranger = openai.OpenAI(base_url=base_url, api_key=other["token"], max_retries=0)
    with pytest.raises(openai.NotFoundError):
        stranger.chat.completions.create(model=model.id, messages=messages)
    with pytest.raises(openai.AuthenticationError):
        openai.OpenAI(base_url=base_url, api_key="not-a-token", max_retries=0).models.list()


def test_a_sharded_fsdp_checkpoint_serves_the_answers_of_its_weights(
        serving_stack: Stack) -> None:
    """An FSDP job's step checkpoint (DCP shards from two ranks) registered and deployed: the
    replica consolidates the shards and answers exactly as the same weights do in PyTorch
    here, greedy and seeded sampling alike. In the eager runtime: the compiled runtime's
    answers are tests/serving/test_serve.py's (the same entrypoint in a process of its own),
    its deployment timeout tests/serving/test_api.py's, and the aot runtime's packaging job
    tests/serving/test_packaging.py's; a replica compiling here, with a replica's own cold
    TorchInductor cache, cost three minutes of the suite and showed nothing new."""
    import torch

    import localvertex.replicas.storage as local_storage
    from contract import prediction
    from trainers.serving import generate, loader

    stack = serving_stack
    seeded = json.loads(stack.manage("seed_demo", "--username", "fay", "--team", "sharded",
                                     capture=True))
    api = Api(stack.web_url, seeded["token"])
    job_id = train(stack, api, {
        "name": "fsdp-to-serve", "strategy": "fsdp", "chief": {"machine_type": "n1-standard-4"},
        "workers": {"replica_count": 1},
        "args": ["--preset", "tiny", "--steps", "20", "--checkpoint-every", "20"]})
    wait(stack, "the checkpoint event", lambda: 20 in api.get(
        f"/api/v1/serving/jobs/{job_id}/")["checkpoint_steps"])

    response = api.post("/api/v1/serving/models/", {"job": job_id, "step": 20,
                                                    "runtime": "eager"})
    assert response.status_code == 201, response.text
    model_id = response.json()["id"]
    entry = wait(stack, "the upload", lambda: (lambda m: m if m["state"] != "UPLOADING" else None)(
        api.get(f"/api/v1/serving/models/{model_id}/")))
    assert entry["state"] == "READY" and entry["runtime"] == "eager", entry["error_message"]
    folder = Path(local_storage.local_path(stack.emulator_data_dir, entry["artifact_uri"]))
    assert (folder / "dcp" / ".metadata").exists(), "the checkpoint is the sharded one"

    response = api.post("/api/v1/serving/endpoints/", {"name": "fsdp-sharded",
                                                       "probe_interval_s": 60})
    assert response.status_code == 201, response.text
    endpoint_id = response.json()["id"]
    wait(stack, "the endpoint", lambda: api.get(
        f"/api/v1/serving/endpoints/{endpoint_id}/")["state"] == "READY")
    response = api.post(f"/api/v1/serving/endpoints/{endpoint_id}/deployments/", {
        "model": model_id, "machine_type": "n1-standard-4", "min_replicas": 1,
        "max_replicas": 1})
    assert response.status_code == 201, response.text
    deployment = wait(stack, "the deployment", lambda: (
        lambda d: d if d["state"] in ("DEPLOYED", "FAILED") else None)(
        api.get(f"/api/v1/serving/deployments/{response.json()['id']}/")), timeout_s=1200)
    assert deployment["state"] == "DEPLOYED", deployment["error_message"]

    instances = ["def main():\n    ", {"prompt": "import ", "max_tokens": 6},
                 {"prompt": "x = ", "temperature": 0.8, "seed": 11}]
    response = api.post(f"/api/v1/serving/endpoints/{endpoint_id}/predict/",
                        {"instances": instances})
    assert response.status_code == 200, response.text
    eager = loader.load(str(folder)).model
    with torch.inference_mode():
        expected = generate.generate(eager, prediction.parse_instances(instances, None))
    assert response.json()["predictions"] == expected


def byte_level_bpe(vocab_size: int) -> Any:
    """A byte-level BPE tokenizer trained with `tokenizers` on a few lines of Python (fast: the
    hf_models fixture's trains on the standard library's files), with its decoder."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    text = Path(__file__).read_text()
    tokenizer.train_from_iterator(text.splitlines(), trainers.BpeTrainer(
        vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    return tokenizer


def test_an_hf_export_registered_for_vllm_answers_as_transformers_does(
        serving_stack: Stack) -> None:
    """A tiny Llama made by transformers (random weights, save_pretrained) and a BPE tokenizer,
    in a folder under the team's prefix: registered as a Hugging Face model for the vllm
    runtime (Model Garden's container spec; the emulator runs the product's server on CPU in
    its place) and deployed on its GPU machine; its greedy text through the control plane's
    predict route and OpenAI route equals transformers' generate on the same folder. Its
    parameter count is transformers' own."""
    import openai
    import torch
    from transformers import AutoModelForCausalLM

    import localvertex.replicas.storage as local_storage
    from tests.trainers.hf_models import VOCAB, make_model

    stack = serving_stack
    seeded = json.loads(stack.manage("seed_demo", "--username", "hana", "--team", "hf",
                                     capture=True))
    api = Api(stack.web_url, seeded["token"])
    uri = f"gs://cp-local-bucket/jobs/{seeded['team']}/exports/tiny-llama"
    folder = Path(local_storage.local_path(stack.emulator_data_dir, uri))
    make_model(folder, "llama", seed=3)
    tokenizer = byte_level_bpe(VOCAB)
    tokenizer.save(str(folder / "tokenizer.json"))
    for file in folder.iterdir():  # readable by the serving account, as a bucket's objects are
        file.chmod(0o644)

    response = api.post("/api/v1/serving/models/", {
        "format": "hf", "artifact_uri": uri, "team": seeded["team"], "runtime": "vllm",
        "machine_type": "g2-standard-8"})
    assert response.status_code == 201, response.text
    model_id = response.json()["id"]
    # The endpoint is made while the model uploads: the same sweeps finish both.
    response = api.post("/api/v1/serving/endpoints/", {"name": "tiny-llama-vllm",
                                                       "probe_interval_s": 60})
    assert response.status_code == 201, response.text
    endpoint_id = response.json()["id"]
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    entry = api.get(f"/api/v1/serving/models/{model_id}/")
    assert entry["parameter_count"] == model.num_parameters()
    assert "--max-model-len=64" in entry["args"]  # the config's context
    entry = wait(stack, "the upload", lambda: (lambda m: m if m["state"] != "UPLOADING" else None)(
        api.get(f"/api/v1/serving/models/{model_id}/")))
    assert entry["state"] == "READY", entry["error_message"]
    wait(stack, "the endpoint", lambda: api.get(
        f"/api/v1/serving/endpoints/{endpoint_id}/")["state"] == "READY")
    deploy = {"model": model_id, "machine_type": "g2-standard-8",
              "accelerator_type": "NVIDIA_L4", "accelerator_count": 1}
    response = api.post(f"/api/v1/serving/endpoints/{endpoint_id}/deployments/",
                        {**deploy, "machine_type": "g2-standard-24", "accelerator_count": 2})
    assert response.status_code == 400 and "accelerator_count" in response.json(), response.text
    response = api.post(f"/api/v1/serving/endpoints/{endpoint_id}/deployments/", deploy)
    assert response.status_code == 201, response.text
    deployment = wait(stack, "the deployment", lambda: (
        lambda d: d if d["state"] in ("DEPLOYED", "FAILED") else None)(
        api.get(f"/api/v1/serving/deployments/{response.json()['id']}/")), timeout_s=300)
    assert deployment["state"] == "DEPLOYED", deployment["error_message"]

    prompt, new_tokens = "def main():\n    return", 8
    ids = tokenizer.encode(prompt).ids
    with torch.inference_mode():
        out = model.generate(torch.tensor([ids]), max_new_tokens=new_tokens, do_sample=False)
    expected = tokenizer.decode(out[0, len(ids):].tolist())
    response = api.post(f"/api/v1/serving/endpoints/{endpoint_id}/predict/",
                        {"instances": [{"prompt": prompt, "max_tokens": new_tokens}]})
    assert response.status_code == 200, response.text
    assert response.json()["predictions"][0]["text"] == expected
    client = openai.OpenAI(base_url=f"{stack.web_url}/api/v1/serving/endpoints/{endpoint_id}"
                           "/openai/v1", api_key=seeded["token"], max_retries=0, timeout=60)
    completion = client.completions.create(model="", prompt=prompt, max_tokens=new_tokens,
                                           temperature=0)
    assert completion.choices[0].text == expected
