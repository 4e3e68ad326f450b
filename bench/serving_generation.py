"""Generation with the KV cache and continuous batching (trainers/serving/decoding.py,
batcher.py): what a token costs as the output grows, and what concurrent clients get.

    python -m bench.serving_generation [--seconds 5] [--rounds 3] [--threads 1]
                                       [--lengths 32,256,1024]

1. ms/token at 32, 256 and 1024 output tokens, greedy, one sequence, in process: the cached
   decoder (a prefill, then one byte a step against the cache) beside the no-cache path (the
   whole context every step, as the server generated before). Goal: with the cache the cost
   a token stays flat, 1024's within 2x of 32's (the ratio is printed); the cached bytes equal
   the no-cache path's exactly at every length. Cached: the best of 5 runs; no-cache: one.
2. Throughput of `python -m trainers.serve` (its own process, as a Vertex replica) at 1 and 16
   concurrent clients, each sending {"prompt", "max_tokens": 64} back to back for --seconds
   over a kept-alive connection: generated tokens/s and the ratio 16 clients / 1 (goal >= 4x),
   in --rounds alternating rounds (the median ratio); the clients are threads of this process,
   so on a small machine they take CPU from the server. Beside it, tokens per second of the
   server's own CPU time (its ratio is what batching saves a token, whatever the neighbours
   took). Then the decoder alone, in process.
3. Short behind long: a 500-token request (the contract's limit is 512) streams from the
   server (/v1/completions); once its first bytes arrive a 16-token request is sent: it joins
   the running batch and is answered while the long one is still generating (the order and
   both times are printed).

The model is the `tiny` preset's shape (4 layers, 4 heads, width 128; random weights, which
cost what trained ones do) with a context of 1,152 bytes, long enough for 1,024 output tokens
after a prompt; one torch thread, as the server's default.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from pathlib import Path

from bench.serving_latency import run_level, start_server

PROMPT = "import os\nimport sys\n\ndef main("
MODEL = {"block_size": 1152, "n_layer": 4, "n_head": 4, "n_embd": 128}


def build_model():
    from trainers.config import ModelConfig
    from trainers.torch.model import GPT

    return GPT(ModelConfig(**MODEL), seed=0).eval()


def export(folder: Path) -> Path:
    import torch

    model = build_model()
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), folder / "model.pt")
    (folder / "config.json").write_text(json.dumps({"model": asdict(model.config), "step": 0}))
    return folder


def per_token(lengths: list[int]) -> None:
    from contract.prediction import Instance
    from trainers.serving import generate

    model = build_model()
    generate.generate(model, [Instance(PROMPT.encode(), 8)])  # warm up the kernels
    print(f"1. ms/token, one greedy sequence, prompt {len(PROMPT)} bytes, model {MODEL}")
    print("| output tokens | cached ms/token | no-cache ms/token | no-cache / cached "
          "| same bytes |")
    print("|---:|---:|---:|---:|---|")
    cached_ms: dict[int, float] = {}
    for n in lengths:
        instance = [Instance(PROMPT.encode(), n)]
        best = float("inf")
        for _ in range(5):  # best of 5: the machine is shared, the cached runs are short
            t0 = time.perf_counter()
            cached = generate.generate(model, instance)
            best = min(best, time.perf_counter() - t0)
        cached_ms[n] = best * 1000 / n
        t0 = time.perf_counter()
        uncached = generate.generate(model, instance, cache=False)
        uncached_ms = (time.perf_counter() - t0) * 1000 / n
        print(f"| {n} | {cached_ms[n]:.2f} | {uncached_ms:.2f} | "
              f"{uncached_ms / cached_ms[n]:.1f}x | {'yes' if cached == uncached else 'NO'} |")
    first, last = lengths[0], lengths[-1]
    print(f"cached ms/token at {last} over at {first}: {cached_ms[last] / cached_ms[first]:.2f}x "
          "(goal: at most 2x)")


def throughput(folder: Path, seconds: float, threads: int, rounds: int) -> None:
    body = json.dumps({"instances": [{"prompt": PROMPT, "max_tokens": 64}]}).encode()

    def send(conn: http.client.HTTPConnection) -> bool:
        conn.request("POST", "/predict", body=body, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status == 200 and bool(response.read())

    proc, port, _ = start_server(folder, max_batch=32, threads=threads)
    try:
        # Rounds alternate 1 and 16 clients, so a neighbour's burst of work on the shared
        # machine lands on both; the ratio is each round's, the median printed.
        runs = [{clients: measured(proc.pid, port, clients, seconds, send)
                 for clients in (1, 16)} for _ in range(rounds)]
        order = short_behind_long(port)
    finally:
        proc.terminate()
        proc.wait(30)
    print(f"\n2. python -m trainers.serve, 64 tokens a request, {seconds:g} s a level, "
          f"{rounds} rounds")
    print("| round | clients | requests | tokens/s | p50 ms | p99 ms | errors | 16 / 1 "
          "| tokens per server CPU-s | 16 / 1 |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    cpu_ratios = []
    ratios = []
    for number, rows in enumerate(runs, 1):
        ratios.append(rows[16]["rps"] / max(rows[1]["rps"], 1e-9))
        cpu_ratios.append(rows[16]["per_cpu_s"] / max(rows[1]["per_cpu_s"], 1e-9))
        for clients, row in rows.items():
            ratio = f"{ratios[-1]:.1f}x" if clients == 16 else ""
            cpu_ratio = f"{cpu_ratios[-1]:.1f}x" if clients == 16 else ""
            print(f"| {number} | {clients} | {row['requests']} | {row['rps'] * 64:.0f} "
                  f"| {row['p50_ms']:.0f} | {row['p99_ms']:.0f} | {row['errors']} | {ratio} "
                  f"| {row['per_cpu_s']:.0f} | {cpu_ratio} |")
    print(f"throughput at 16 clients over 1, median of the rounds: "
          f"{sorted(ratios)[len(ratios) // 2]:.1f}x (goal: at least 4x); per server "
          f"CPU-second: {sorted(cpu_ratios)[len(cpu_ratios) // 2]:.1f}x")
    decoder_alone()
    print(order)


def cpu_seconds(pid: int) -> float:
    """The process's user + system CPU time (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measured(pid: int, port: int, clients: int, seconds: float, send) -> dict[str, float]:
    """run_level's row, with the tokens generated per second of the server's own CPU time:
    on a machine shared with other work the wall clock also measures the neighbours."""
    before = cpu_seconds(pid)
    row = run_level(port, clients, seconds, send)
    used = cpu_seconds(pid) - before
    return {**row, "per_cpu_s": row["requests"] * 64 / max(used, 1e-9)}


def decoder_alone() -> None:
    """The same 64-token sequences in process, 1 and 16 decoding together: what the server's
    figure is made of, without HTTP and its threads."""
    from contract.prediction import Instance
    from trainers.serving.decoding import Decoder, Sequence

    model = build_model()
    rates = {}
    for batch in (1, 16):
        decoder = Decoder(model, slots=batch)
        for _ in range(batch):
            decoder.join(Sequence(Instance(PROMPT.encode(), 64)))
        t0 = time.perf_counter()
        while not decoder.idle:
            decoder.step()
        rates[batch] = batch * 64 / (time.perf_counter() - t0)
    print(f"the decoder alone: {rates[1]:.0f} tokens/s with 1 sequence, {rates[16]:.0f} with 16 "
          f"({rates[16] / rates[1]:.1f}x)")


def short_behind_long(port: int) -> str:
    finished: dict[str, float] = {}
    started = time.monotonic()
    long_running = threading.Event()

    def long_request() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        body = {"model": "m", "prompt": PROMPT, "max_tokens": 500, "temperature": 0,
                "stream": True}
        conn.request("POST", "/v1/completions", body=json.dumps(body),
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        if response.status != 200:
            raise RuntimeError(f"the long request was refused: {response.read()!r}")
        while line := response.readline():
            if line.startswith(b"data: ") and not long_running.is_set():
                long_running.set()  # its first bytes are out: it is in the running batch
        finished["long"] = time.monotonic() - started

    thread = threading.Thread(target=long_request)
    thread.start()
    long_running.wait(120)
    sent = time.monotonic() - started
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    conn.request("POST", "/predict",
                 body=json.dumps({"instances": [{"prompt": PROMPT, "max_tokens": 16}]}),
                 headers={"Content-Type": "application/json"})
    conn.getresponse().read()
    finished["short"] = time.monotonic() - started
    thread.join()
    order = sorted(finished, key=finished.get)
    return (f"\n3. short behind long: the 16-token request sent at {sent * 1000:.0f} ms, "
            f"while the 500-token one streamed; finished: "
            + ", ".join(f"{name} at {finished[name] * 1000:.0f} ms" for name in order)
            + f" ({'short first' if order[0] == 'short' else 'LONG FIRST'})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per concurrency level")
    parser.add_argument("--rounds", type=int, default=3, help="of 1 then 16 clients")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    parser.add_argument("--lengths", default="32,256,1024", help="output tokens, ascending")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    per_token([int(n) for n in args.lengths.split(",")])
    with tempfile.TemporaryDirectory(prefix="bench-generation-") as scratch:
        throughput(export(Path(scratch) / "model"), args.seconds, args.threads, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
