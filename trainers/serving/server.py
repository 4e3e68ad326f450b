"""Serve a trained model over HTTP, as a Vertex AI custom container does: the byte-level GPT
or a Hugging Face export (config.json + safetensors + tokenizer.json, as --export-hf writes).

    python -m trainers.serve --model-dir /tmp/run/model        # or gs://bucket/job/model
    curl -s localhost:8080/predict -d '{"instances": [{"prompt": "def ", "max_tokens": 8}]}'

On Vertex (Model.containerSpec.command = ["python", "-m", "trainers.serve"]) everything comes
from the environment Vertex sets: AIP_HTTP_PORT (8080), AIP_HEALTH_ROUTE, AIP_PREDICT_ROUTE and
AIP_STORAGE_URI, the copy of the Model's artifact_uri to load. The folder is a training job's
exported model (AIP_MODEL_DIR: model.pt + config.json) or one of its committed checkpoints
(`step-NNNNNNNN/`; sharded ones are consolidated as they load), or a Hugging Face export,
served with its tokenizer: a prompt is its tokens, `tokens` and OpenAI's `usage` count them,
and a prompt (or max_tokens after it) past the model's context (max_position_embeddings, or
--max-model-len) is refused with a 400 naming the field and the limit; a chat is laid out by
the export's chat template where it has one.

Request: {"instances": ["text", {"prompt": "text", "max_tokens": 16, "temperature": 0.0,
"top_p": 0.9, "seed": 1, "stop": ["\n"]}], "parameters": {"max_tokens": 16}}; response:
{"predictions": [{"text": ..., "tokens": n}]}. Beside it, OpenAI's /v1/completions and
/v1/chat/completions (streaming included) and /v1/models, as vLLM serves them, so the `openai`
client works against the replica (base_url=http://host:port/v1).

Generation is continuously batched with a KV cache (decoding.py): up to --max-batch sequences
decode together, one token each per step, and a request joins or leaves the batch at any step.

`--vllm-compat` is how the local emulator runs a Model that names vLLM's entrypoint (Vertex's
prebuilt vLLM container cannot run without a GPU): the first line of the log says so, vLLM's
arguments that mean nothing here are named (--vllm-ignored), and vLLM's own routes (/ping,
/health, /generate: vllm_api.py) are served beside the others.

Events on stdout, one JSON object per line like the trainers': serving_started, serving_stopped,
and errors. Exit codes: 0 stopped by SIGTERM/SIGINT; 2 the model cannot be loaded.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time
from collections.abc import Mapping, Sequence

import torch

from contract import events as contract_events
from trainers import events
from trainers.serving import chat_template, kv_cache, loader, runtimes
from trainers.serving.batcher import ContinuousBatcher
from trainers.serving.decoding import Decoder
from trainers.serving.http import PredictionServer
from trainers.storage import storage_for

DEFAULT_PORT = 8080
DEFAULT_HEALTH_ROUTE = "/health"
DEFAULT_PREDICT_ROUTE = "/predict"
NO_MODEL = "no model: pass --model-dir or set AIP_STORAGE_URI"


def parse_args(argv: Sequence[str] | None, env: Mapping[str, str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m trainers.serve",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--model-dir",
        default=env.get("AIP_STORAGE_URI"),
        help="model folder, local or gs:// (default: AIP_STORAGE_URI)",
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on")
    parser.add_argument("--port", type=int, default=int(env.get("AIP_HTTP_PORT") or DEFAULT_PORT))
    parser.add_argument(
        "--health-route", default=env.get("AIP_HEALTH_ROUTE") or DEFAULT_HEALTH_ROUTE
    )
    parser.add_argument(
        "--predict-route", default=env.get("AIP_PREDICT_ROUTE") or DEFAULT_PREDICT_ROUTE
    )
    parser.add_argument("--max-batch", type=int, default=32,
                        help="sequences decoded together (the KV cache's slots)")
    parser.add_argument("--kv-cache-gib", type=float, default=4.0,
                        help="the most memory the KV cache takes: fewer slots than --max-batch "
                        "where that many do not fit (as vLLM sizes its cache to the memory it "
                        "is given); requests beyond them wait for a slot")
    parser.add_argument(
        "--max-wait-ms",
        type=float,
        default=0.0,
        help="how long an idle server waits for more requests before its first step (0: "
        "start at once; later requests join the running batch at its next step)",
    )
    parser.add_argument("--served-model-name", default=None,
                        help="the model's name in OpenAI's API (default: the model folder's)")
    parser.add_argument("--no-kv-cache", action="store_true",
                        help="run the whole context every step (the no-cache path)")
    # One thread by default, as the trainers' cpu_threads: concurrency comes from batching,
    # and intra-op threads on small matrices cost more than they give once replicas share
    # cores (10x slower here with 2 threads on a busy 2-core machine; bench/README.md).
    parser.add_argument(
        "--threads", type=int, default=1, help="torch CPU threads (0: torch's default)"
    )
    parser.add_argument("--device", default="auto", help="auto | cpu | cuda")
    parser.add_argument("--dtype", default="auto", choices=sorted(hf_dtypes()),
                        help="a Hugging Face export's weights' type (auto: float32, as exported)")
    parser.add_argument("--max-model-len", type=int, default=None,
                        help="a Hugging Face export's context in tokens (default: its "
                        "max_position_embeddings; the KV cache holds this many per sequence)")
    parser.add_argument("--vllm-compat", action="store_true",
                        help="stand in for Vertex's vLLM container: say so, serve its routes")
    parser.add_argument("--vllm-ignored", action="append", default=[], metavar="ARG",
                        help="a vLLM argument that has no meaning here, named in the log")
    parser.add_argument(
        "--runtime",
        default="eager",
        choices=runtimes.RUNTIMES,
        help="eager: PyTorch as trained; compiled: torch.compile, compiled before serving; "
        "aot: an AOTInductor package, built once and kept beside the weights",
    )
    args = parser.parse_args(argv)
    if not args.model_dir and not args.vllm_compat:  # that one says what it is first
        parser.error(NO_MODEL)
    return args


def hf_dtypes() -> tuple[str, ...]:
    from trainers.serving.hf_loader import DTYPES

    return tuple(DTYPES)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv, os.environ)
    if args.vllm_compat:
        # The replica log's first line: what answers in vLLM's place, and what it ignores.
        events.emit(contract_events.SERVING_RUNTIME,
                    "vLLM is not run locally (it needs a GPU): the product's CPU model server "
                    "answers the same HTTP contract (OpenAI's /v1/completions, "
                    "/v1/chat/completions, /v1/models; vLLM's /generate, /ping, /health) "
                    "on the same model folder", runtime="vllm-compat")
        if args.vllm_ignored:
            events.emit(contract_events.SERVING_RUNTIME,
                        "vLLM arguments ignored here: " + ", ".join(args.vllm_ignored),
                        runtime="vllm-compat")
    if not args.model_dir:
        events.emit(contract_events.SERVING_FAILED, NO_MODEL, severity="ERROR")
        return 2
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        loaded = loader.load(args.model_dir, device, args.dtype, args.max_model_len)
        if args.runtime != "eager":
            loader.require_gpt(loaded, f"runtime {args.runtime}")
    except (loader.ModelLoadError, OSError) as exc:
        events.emit(contract_events.SERVING_FAILED, f"cannot load the model: {exc}",
                    severity="ERROR")
        return 2

    prepared = runtimes.prepare(
        loaded.model,
        args.runtime,
        folder=loaded.source,
        storage=storage_for(loaded.source),
        max_batch=args.max_batch,
        log=lambda message: events.emit(contract_events.SERVING_RUNTIME, message,
                                         runtime=args.runtime),
    )

    server, batcher, decoder = make_server(args, loaded, prepared.model)
    _shut_down_on_signals(server)
    events.emit(
        contract_events.SERVING_STARTED,
        f"serving {loaded.source} ({loaded.architecture}, {loaded.params:,} parameters"
        + (f", context {loaded.codec.context} tokens" if loaded.codec.context else "")
        + f") on port {server.server_port}",
        port=server.server_port,
        model=loaded.source,
        step=loaded.step,
        params=loaded.params,
        device=device,
        runtime=prepared.runtime,
        warmup_s=round(prepared.warmup_s, 3),
        compiled_at_start=prepared.built,
        max_batch=args.max_batch,
        kv_cache=decoder.cache is not None,
        health_route=args.health_route,
        predict_route=args.predict_route,
    )
    _serve_until_stopped(server, batcher)
    return 0


def make_server(args: argparse.Namespace, loaded: loader.LoadedModel, model: torch.nn.Module,
                ) -> tuple[PredictionServer, ContinuousBatcher, Decoder]:
    """The HTTP server (not serving yet), its batcher and decoder, for `model` (the loaded
    model as the runtime prepared it)."""
    slots = cache_slots(model, args.max_batch, args.kv_cache_gib)
    if slots < args.max_batch:
        events.emit(contract_events.SERVING_RUNTIME,
                    f"KV cache: {slots} sequences of --max-batch {args.max_batch} fit in "
                    f"--kv-cache-gib {args.kv_cache_gib:g}; the others wait for a slot",
                    runtime=args.runtime)
    decoder = Decoder(model, slots=slots, cache=not args.no_kv_cache, codec=loaded.codec)
    batcher = ContinuousBatcher(decoder, max_wait_s=args.max_wait_ms / 1000)
    info = {"model": loaded.source, "step": loaded.step, "params": loaded.params}
    name = args.served_model_name or loaded.source.rstrip("/").rsplit("/", 1)[-1]
    template = None
    if loaded.chat_template is not None:
        source, special = loaded.chat_template, loaded.special_tokens

        def template(messages: list[dict[str, str]]) -> str:
            return chat_template.render(source, messages, special)

    server = PredictionServer(
        (args.host, args.port), batcher, args.health_route, args.predict_route, info, name,
        chat_template=template, vllm=args.vllm_compat,
    )
    return server, batcher, decoder


def cache_slots(model: torch.nn.Module, wanted: int, gib: float) -> int:
    """How many of `wanted` sequences' keys and values fit in `gib` GiB (at least one): a
    Hugging Face model's slot is its whole context long."""
    layers, heads, positions, width = kv_cache.cache_shape(model)  # type: ignore[arg-type]
    parameter = next(model.parameters(), None)
    size = parameter.element_size() if parameter is not None else 4
    per_slot = 2 * layers * heads * positions * width * size
    return max(1, min(wanted, int(gib * 1024**3) // per_slot))


def _shut_down_on_signals(server: PredictionServer) -> None:
    """SIGTERM (Vertex undeploying) and SIGINT end serve_forever, once."""
    stopping = threading.Event()

    def stop(signum: int, _frame: object) -> None:
        if not stopping.is_set():
            stopping.set()
            # shutdown() waits for serve_forever to return: call it off the main thread.
            threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


def _serve_until_stopped(server: PredictionServer, batcher: ContinuousBatcher) -> None:
    """Serve until a signal stops the server, then report what was served."""
    started = time.monotonic()
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        batcher.close()
    stats = batcher.stats
    events.emit(
        contract_events.SERVING_STOPPED,
        f"served {stats.items} instances in {stats.steps} decoding steps",
        instances=stats.items,
        batches=stats.steps,
        largest_batch=stats.largest,
        wall_s=round(time.monotonic() - started, 3),
    )
