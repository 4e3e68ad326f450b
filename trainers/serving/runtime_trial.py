"""A runtime trial: each candidate runtime of a model served on this machine and measured under
the endpoint's expected traffic, the figures written to one JSON file. It runs as a short
CustomJob on the machine type the model will be deployed on (controlplane/serving/trials.py),
the emulator running it locally as a real process.

    python -m trainers.serving.runtime_trial MODEL_FOLDER RESULT_FILE \
        [--runtimes eager,compiled,aot,triton,vllm] [--prompt-tokens 32] [--output-tokens 16] \
        [--concurrency 4] [--requests 16] [--triton-python PATH]

Each runtime is served as its replicas serve it, in its own process: `python -m trainers.serve
--runtime R` for eager, compiled and aot (aot builds its package beside the weights, or loads
the one the packaging job built), and for triton the model's Triton repository (written by
trainers.serving.triton_package to a scratch folder) under the tritonserver of the Triton tools
(`--triton-python`, by default the .venv/triton beside this interpreter: `make triton-env`),
asked one request per generation as the control plane asks a triton endpoint. vllm needs a GPU
and Model Garden's vLLM container: on a CPU machine its row says so.

Once the server is healthy (its start is reported, not measured as traffic) one request warms
it, then `--concurrency` clients, each with one kept-alive HTTP connection, send `--requests`
greedy generations in all: a prompt of `--prompt-tokens` bytes (the byte-level model's tokens)
asking `--output-tokens`. Latency is per request at the client (p50, p99: nearest rank);
throughput is the tokens the answers say were generated over the wall time of the whole load.
A runtime that fails has its error as its row's note, and the others are still measured.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from trainers.storage import StorageError, storage_for

RUNTIMES = ("eager", "compiled", "aot", "triton", "vllm")
PRODUCT_RUNTIMES = ("eager", "compiled", "aot")
TRITON_MODEL = "gpt_generate"  # the generation model of the repository (triton_repo.py)
TRITON_ROUTE = f"/v2/models/{TRITON_MODEL}/infer"
# Compiling or building an aot package on a small CPU machine takes minutes; longer is broken.
START_TIMEOUT_S = 900.0
REQUEST_TIMEOUT_S = 300.0
# What the prompts are made of: code, as the demo model was trained on.
_TEXT = "import os\nimport sys\n\n\ndef main(argv):\n    for name in argv:\n        print(name)\n"


@dataclass
class Row:
    runtime: str
    tokens_per_s: float | None = None
    p50_ms: float | None = None
    p99_ms: float | None = None
    requests: int = 0
    errors: int = 0
    start_s: float | None = None  # process start to healthy (compilation, package load)
    note: str = ""


@dataclass
class Load:
    prompt: str
    output_tokens: int
    concurrency: int
    requests: int
    latencies_s: list[float] = field(default_factory=list)
    tokens: int = 0
    errors: int = 0


# Sends one generation on a connection; returns the tokens the answer says it generated.
Send = Callable[[http.client.HTTPConnection], int]


def prompt_of(tokens: int) -> str:
    """A prompt of exactly ``tokens`` bytes (one token a byte)."""
    return (_TEXT * (tokens // len(_TEXT) + 1))[:tokens]


def _post(conn: http.client.HTTPConnection, route: str, body: bytes) -> dict:
    conn.request("POST", route, body=body, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {data[:200]!r}")
    return json.loads(data)


def product_send(prompt: str, output_tokens: int) -> Send:
    body = json.dumps({"instances": [{"prompt": prompt, "max_tokens": output_tokens,
                                      "temperature": 0}]}).encode()
    return lambda conn: int(_post(conn, "/predict", body)["predictions"][0]["tokens"])


def triton_send(prompt: str, output_tokens: int) -> Send:
    """One KServe v2 request holding the whole generation: what the control plane sends a
    triton endpoint (controlplane/serving/triton_kserve.py), the loop inside Triton."""
    instance = json.dumps({"prompt": prompt, "max_tokens": output_tokens, "temperature": 0.0,
                           "top_p": 1.0}, separators=(",", ":"))
    body = json.dumps({"inputs": [{"name": "instance", "datatype": "BYTES", "shape": [1, 1],
                                   "data": [instance]}],
                       "outputs": [{"name": "text_output"}, {"name": "tokens"}]}).encode()

    def send(conn: http.client.HTTPConnection) -> int:
        outputs = {o["name"]: o for o in _post(conn, TRITON_ROUTE, body)["outputs"]}
        return int(outputs["tokens"]["data"][0])

    return send


def run_load(port: int, load: Load, send: Send) -> float:
    """Send the load's requests from its clients; returns the wall time of the whole load."""
    remaining = [load.requests]
    lock = threading.Lock()

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
        while True:
            with lock:
                if remaining[0] == 0:
                    break
                remaining[0] -= 1
            started = time.perf_counter()
            try:
                tokens = send(conn)
            except (OSError, http.client.HTTPException, RuntimeError, KeyError, ValueError):
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=REQUEST_TIMEOUT_S)
                with lock:
                    load.errors += 1
                continue
            with lock:
                load.latencies_s.append(time.perf_counter() - started)
                load.tokens += tokens
        conn.close()

    threads = [threading.Thread(target=client) for _ in range(load.concurrency)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return time.perf_counter() - started


def percentile_ms(latencies_s: list[float], q: float) -> float:
    """Nearest rank: the smallest latency at or above which a fraction q of them lie."""
    ordered = sorted(latencies_s)
    rank = min(len(ordered), max(1, math.ceil(len(ordered) * q)))
    return round(ordered[rank - 1] * 1000, 3)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_healthy(proc: subprocess.Popen, port: int, route: str) -> float:
    started = time.monotonic()
    while time.monotonic() - started < START_TIMEOUT_S:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with status {proc.returncode} before it "
                               f"was healthy")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", route)
            if conn.getresponse().status == 200:
                return time.monotonic() - started
        except OSError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"the server was not healthy after {START_TIMEOUT_S:.0f} s")


def _last_line(log: Path) -> str:
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def serve_and_measure(row: Row, command: list[str], health_route: str, load: Load,
                      send: Send, scratch: Path) -> None:
    """Start the server ``command`` (with --port appended), measure ``load`` against it, stop
    it; fills ``row``, its note the error where one stopped it."""
    port = free_port()
    log = scratch / f"{row.runtime}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([*command, "--port", str(port)], stdout=out,
                                stderr=subprocess.STDOUT)
    try:
        row.start_s = round(wait_healthy(proc, port, health_route), 3)
        warm = Load(load.prompt, load.output_tokens, 1, 1)
        run_load(port, warm, send)
        wall_s = run_load(port, load, send)
        row.requests, row.errors = len(load.latencies_s), load.errors
        if not load.latencies_s:
            raise RuntimeError(f"none of the {load.requests} requests was answered")
        row.tokens_per_s = round(load.tokens / wall_s, 3)
        row.p50_ms = percentile_ms(load.latencies_s, 0.50)
        row.p99_ms = percentile_ms(load.latencies_s, 0.99)
    except RuntimeError as exc:
        row.note = f"{exc}; the server's last line: {_last_line(log)}"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def default_triton_python() -> str:
    path = Path(sys.prefix) / "triton" / "bin" / "python"
    return str(path) if path.exists() else ""


def measure(runtime: str, model_folder: str, load: Load, scratch: Path,
            triton_python: str) -> Row:
    row = Row(runtime)
    if runtime in PRODUCT_RUNTIMES:
        command = [sys.executable, "-m", "trainers.serve", "--model-dir", model_folder,
                   "--host", "127.0.0.1", "--runtime", runtime]
        serve_and_measure(row, command, "/health", load,
                          product_send(load.prompt, load.output_tokens), scratch)
    elif runtime == "triton":
        if not triton_python:
            row.note = "needs the Triton tools (tritonserver), not in this image"
            return row
        repository = scratch / "triton"
        built = subprocess.run([triton_python, "-m", "trainers.serving.triton_package",
                                model_folder, str(repository)], capture_output=True, text=True)
        if built.returncode != 0:
            lines = (built.stderr or built.stdout).strip().splitlines()
            row.note = f"its repository was not built: {lines[-1][:300] if lines else ''}"
            return row
        command = [triton_python, "-m", "trainers.serving.triton_local", str(repository),
                   f"--vertex-ai-default-model={TRITON_MODEL}"]
        serve_and_measure(row, command, "/v2/health/ready", load,
                          triton_send(load.prompt, load.output_tokens), scratch)
    else:  # vllm
        row.note = "needs a GPU" if not _has_gpu() else \
            "runs in Model Garden's vLLM container, not this image: deploy it to measure"
    return row


def _has_gpu() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_folder", help="the model's weights: model.pt + config.json")
    parser.add_argument("result", help="the JSON file to write (local, /gcs/... or gs://)")
    parser.add_argument("--runtimes", default=",".join(RUNTIMES))
    parser.add_argument("--prompt-tokens", type=int, default=32)
    parser.add_argument("--output-tokens", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--triton-python", default=default_triton_python())
    args = parser.parse_args(argv)
    runtimes = [r for r in args.runtimes.split(",") if r]
    unknown = sorted(set(runtimes) - set(RUNTIMES))
    if unknown:
        parser.error(f"--runtimes: unknown {', '.join(unknown)}; of {', '.join(RUNTIMES)}")
    rows = []
    with tempfile.TemporaryDirectory(prefix="runtime-trial-") as scratch:
        for runtime in runtimes:
            load = Load(prompt_of(args.prompt_tokens), args.output_tokens, args.concurrency,
                        args.requests)
            row = measure(runtime, args.model_folder, load, Path(scratch), args.triton_python)
            print(json.dumps({"message": f"runtime trial: {runtime}", **asdict(row)}),
                  flush=True)
            rows.append(asdict(row))
    result = {"rows": rows, "cpus": os.cpu_count(),
              "traffic": {"prompt_tokens": args.prompt_tokens,
                          "output_tokens": args.output_tokens,
                          "concurrency": args.concurrency, "requests": args.requests}}
    try:
        storage = storage_for(args.result)
        storage.make_dirs(args.result.rsplit("/", 1)[0])
        storage.replace_file(args.result, json.dumps(result, indent=1).encode())
    except (StorageError, OSError) as exc:
        # One structured ERROR line: the trial's error on its page (controlplane/serving/
        # trials.py reads it, as the packaging job's).
        print(json.dumps({"severity": "ERROR", "message": f"runtime trial: the figures were "
                          f"not written to {args.result}: {exc}"}), file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
