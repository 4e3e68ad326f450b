"""The model server on Hugging Face exports (trainers/serving/hf_loader.py, hf_model.py,
codec.py): tiny Llama and Qwen3 models made by transformers with a BPE tokenizer trained by
`tokenizers` (tests/trainers/hf_models.py), checked against transformers' own generate(), and
served over HTTP to the `openai` client and vLLM's routes."""

from __future__ import annotations

import json
import shutil
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import openai
import pytest
import torch

from contract.prediction import Instance
from trainers.serving import loader, server
from trainers.serving.codec import TokenizerCodec
from trainers.serving.decoding import STOP, Decoder, Sequence

pytestmark = pytest.mark.trainers

PROMPTS = ["def main():\n    ", "import os\nimport sys\n", "x"]
CONTEXT = 64  # the fixtures' max_position_embeddings
TEMPLATE = ("{% for m in messages %}<{{ m.role }}>{{ m.content }}\n{% endfor %}"
            "{% if add_generation_prompt %}<assistant>{% endif %}")


@pytest.fixture(scope="module")
def exports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name -> an export folder: config.json, model.safetensors, tokenizer.json (a byte-level
    BPE with its decoder, as real exports have); the Llama one with a chat template too."""
    from tokenizers import Tokenizer, decoders

    from tests.trainers.hf_models import make_model, make_tokenizer

    base = tmp_path_factory.mktemp("hf-exports")
    tokenizer = Tokenizer.from_file(str(make_tokenizer(base / "bpe.json")))
    tokenizer.decoder = decoders.ByteLevel()
    folders = {}
    for seed, name in enumerate(("llama", "qwen3")):
        # The Qwen3 one in shards with their index, as large exports are saved.
        save = {"max_shard_size": "40KB"} if name == "qwen3" else {}
        folder = make_model(base / name, name, seed=seed + 3, **save)
        tokenizer.save(str(folder / "tokenizer.json"))
        folders[name] = folder
    (folders["llama"] / "chat_template.jinja").write_text(TEMPLATE)
    return folders


def _decode(loaded: loader.LoadedModel, prompts: list[str], max_tokens: int,
            cache: bool, eos: frozenset[int] | None = None) -> list[Sequence]:
    """The prompts continued together by the server's decoder (continuous batching)."""
    codec = loaded.codec
    if eos is not None:
        codec = TokenizerCodec(codec.tokenizer, codec.context, eos)  # type: ignore[attr-defined]
    decoder = Decoder(loaded.model, slots=4, cache=cache, codec=codec)
    sequences = [Sequence(Instance(p.encode(), max_tokens)) for p in prompts]
    for sequence in sequences[:2]:
        decoder.join(sequence)
    decoder.step()
    decoder.join(sequences[2])  # joins the running batch one step later
    while not decoder.idle:
        decoder.step()
    return sequences


@pytest.mark.parametrize("name", ["llama", "qwen3"])
def test_greedy_output_equals_transformers_generate_with_and_without_the_cache(
        exports: dict[str, Path], name: str) -> None:
    from transformers import AutoModelForCausalLM

    loaded = loader.load(str(exports[name]))
    assert loaded.codec.context == CONTEXT and loaded.architecture.lower().startswith(name[:4])
    reference = AutoModelForCausalLM.from_pretrained(exports[name], dtype=torch.float32).eval()
    tokenizer = loaded.codec.tokenizer  # type: ignore[attr-defined]
    wanted = []
    for prompt in PROMPTS:
        ids = tokenizer.encode(prompt).ids
        out = reference.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids),
                                 dtype=torch.long), max_new_tokens=12, do_sample=False)
        wanted.append(out[0, len(ids):].tolist())  # up to its end-of-sequence token, if any
    for cache in (True, False):
        got = _decode(loaded, PROMPTS, 12, cache)
        assert [s.generated for s in got] == wanted, f"cache={cache}"
        assert [s.text() for s in got] == [
            tokenizer.decode([t for t in w if t not in loaded.codec.eos]) for w in wanted]
    # The model's end-of-sequence token ends a generation where it comes (counted, not shown).
    eos = wanted[0][5]
    [ended, *_] = _decode(loaded, PROMPTS, 12, cache=True, eos=frozenset({eos}))
    first = wanted[0].index(eos)
    assert ended.generated == wanted[0][:first + 1] and ended.finish_reason == STOP
    assert ended.text() == tokenizer.decode(wanted[0][:first])


@pytest.fixture(scope="module")
def url(exports: dict[str, Path]) -> Iterator[str]:
    """The Llama export served in this process as `python -m trainers.serve --vllm-compat`
    serves it (the same parts, without the signal handlers)."""
    args = server.parse_args(["--model-dir", str(exports["llama"]), "--port", "0",
                              "--host", "127.0.0.1", "--max-batch", "4", "--vllm-compat",
                              "--served-model-name", "tiny-llama"], {})
    loaded = loader.load(args.model_dir)
    http_server, batcher, _ = server.make_server(args, loaded, loaded.model)
    threading.Thread(target=http_server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{http_server.server_port}"
    finally:
        http_server.shutdown()
        http_server.server_close()
        batcher.close()


def _post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=json.dumps(body).encode())
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_openai_client_gets_text_streams_and_token_counts(
        url: str, exports: dict[str, Path]) -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(exports["llama"] / "tokenizer.json"))
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    whole = client.completions.create(model="tiny-llama", prompt=PROMPTS[0], max_tokens=12,
                                      temperature=0)
    predicted = _post(url + "/predict", {"instances": [{"prompt": PROMPTS[0],
                                                        "max_tokens": 12}]})[1]
    assert predicted["predictions"][0] == {"text": whole.choices[0].text, "tokens": 12}
    assert whole.usage.prompt_tokens == len(tokenizer.encode(PROMPTS[0]).ids)
    assert whole.usage.completion_tokens == 12
    stream = client.completions.create(model="tiny-llama", prompt=PROMPTS[0], max_tokens=12,
                                       temperature=0, stream=True,
                                       stream_options={"include_usage": True})
    chunks = list(stream)
    assert "".join(c.choices[0].text for c in chunks if c.choices) == whole.choices[0].text
    assert chunks[-1].usage.completion_tokens == 12
    # A stop sequence ends the text before it.
    stop = whole.choices[0].text[4:7]
    stopped = client.completions.create(model="tiny-llama", prompt=PROMPTS[0], max_tokens=12,
                                        temperature=0, stop=[stop])
    cut = whole.choices[0].text.index(stop)
    assert stopped.choices[0].text == whole.choices[0].text[:cut]
    assert stopped.choices[0].finish_reason == "stop"
    # A seeded draw repeats.
    drawn = [client.completions.create(model="tiny-llama", prompt="x", max_tokens=8,
                                       temperature=1.0, top_p=0.9, seed=5).choices[0].text
             for _ in range(2)]
    assert drawn[0] == drawn[1]
    # The chat goes through the export's own template: its tokens are the prompt's.
    messages = [{"role": "user", "content": "hello"}]
    chat = client.chat.completions.create(model="tiny-llama", messages=messages,
                                          max_tokens=5, temperature=0)
    laid_out = "<user>hello\n<assistant>"
    assert chat.usage.prompt_tokens == len(tokenizer.encode(laid_out).ids)
    assert chat.choices[0].message.content == _post(
        url + "/predict", {"instances": [{"prompt": laid_out, "max_tokens": 5}]}
    )[1]["predictions"][0]["text"]
    models = client.models.list().data
    assert models[0].id == "tiny-llama" and models[0].model_extra["max_model_len"] == CONTEXT


def test_a_prompt_or_max_tokens_past_the_context_is_a_400_naming_the_field(url: str) -> None:
    client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.BadRequestError) as long_prompt:
        client.completions.create(model="m", prompt="def f(x): return x\n" * 40, max_tokens=1)
    assert long_prompt.value.body["param"] == "prompt"
    assert f"context is {CONTEXT} tokens" in long_prompt.value.body["message"]
    with pytest.raises(openai.BadRequestError) as too_many:
        client.completions.create(model="m", prompt=PROMPTS[0], max_tokens=CONTEXT)
    assert too_many.value.body["param"] == "max_tokens"
    assert f"context of {CONTEXT} tokens" in too_many.value.body["message"]
    status, body = _post(url + "/predict", {"instances": ["x", {"prompt": "x",
                                                                "max_tokens": CONTEXT}]})
    assert status == 400 and body["error"].startswith("instances[1].max_tokens:")


def test_vllm_routes(url: str) -> None:
    with urllib.request.urlopen(url + "/ping", timeout=30) as response:
        assert response.status == 200
    text = _post(url + "/predict", {"instances": [{"prompt": "x", "max_tokens": 6}]}
                 )[1]["predictions"][0]["text"]
    status, body = _post(url + "/generate", {"instances": [
        {"prompt": "x", "max_tokens": 6, "raw_response": True, "top_k": 1},
        {"prompt": "x", "max_tokens": 6, "temperature": 0}]})
    assert status == 200 and body["predictions"] == [text, f"Prompt:\nx\nOutput:\n{text}"]
    assert _post(url + "/generate", {"prompt": "x", "max_tokens": 6, "temperature": 0}) \
        == (200, {"text": ["x" + text]})
    status, body = _post(url + "/generate", {"prompt": "x", "top_k": 50})
    assert status == 400 and body["error"].startswith("top_k:")


def test_a_vllm_replica_says_first_what_answers_and_what_it_ignores(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        exports: dict[str, Path], tmp_path: Path) -> None:
    monkeypatch.delenv("AIP_STORAGE_URI", raising=False)
    broken = tmp_path / "broken"
    shutil.copytree(exports["qwen3"], broken)
    (broken / "tokenizer.json").unlink()
    assert server.main(["--vllm-compat", "--vllm-ignored=--tensor-parallel-size",
                        "--model-dir", str(broken)]) == 2
    first, ignored, failed = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert first["event"] == "serving_runtime"
    assert first["message"].startswith("vLLM is not run locally")
    assert ignored["message"] == "vLLM arguments ignored here: --tensor-parallel-size"
    assert failed["event"] == "serving_failed" and "no tokenizer.json" in failed["message"]


def test_the_gpts_compiled_runtimes_and_packages_refuse_an_export(
        capsys: pytest.CaptureFixture[str], exports: dict[str, Path]) -> None:
    from trainers.serving import aot_package

    assert server.main(["--model-dir", str(exports["llama"]), "--runtime", "aot"]) == 2
    said = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert said["event"] == "serving_failed" and "runtime aot: made for the byte-level GPT" \
        in said["message"]
    assert aot_package.main([str(exports["llama"])]) == 2
    assert "Hugging Face export (LlamaForCausalLM)" in capsys.readouterr().err


def test_the_kv_cache_takes_no_more_memory_than_it_is_given(exports: dict[str, Path]) -> None:
    model = loader.load(str(exports["llama"])).model
    # A slot: keys and values of 2 layers x 2 KV heads x 64 positions x 8 wide, in float32.
    per_slot = 2 * 2 * 2 * CONTEXT * 8 * 4
    assert server.cache_slots(model, 32, 3 * per_slot / 1024**3) == 3
    assert server.cache_slots(model, 32, 1.0) == 32
    assert server.cache_slots(model, 32, 0.0) == 1
