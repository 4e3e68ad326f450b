"""The PyTorch trainer on streamed files at world size 2: stopped by a SIGTERM mid-epoch and
resumed from its emergency checkpoint, it trains on exactly the batches of an uninterrupted run,
step for step, into the next epoch.

The three runs share one group of processes (tests/trainers/strategy_group.py); the data are
byte-level JSONL files in a bucket (gs:// served from a local folder through fsspec).
"""

from __future__ import annotations

import json
import sysconfig
from pathlib import Path

import pytest
import torch
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from tests.trainers.conftest import Group
from tests.trainers.replicas import finish_all, start_world

pytestmark = pytest.mark.trainers

STEPS = 12
SIGTERM_AT = 5  # rank 1 signals itself as step 5 starts; every rank stops after step 6
FILES, DOCS, DOC_BYTES = 6, 3, 330  # ~6 KB: each rank's epoch ends near step 10
DATA = "gs://bucket/data/train-*.jsonl"
HELD_OUT = "gs://bucket/data/held-out.jsonl"


# A tiny Llama and a BPE tokenizer trained on the data: the stream tokenizes with --tokenizer
# for the vocabulary of the model's config.json.
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 32,
         "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
         "num_key_value_heads": 1, "vocab_size": 512, "max_position_embeddings": 128}


def write_model(folder: Path, bucket: Path) -> None:
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA))
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel()
    texts = [json.loads(line)["text"] for path in sorted((bucket / "data").glob("train-*"))
             for line in path.read_text().splitlines()]
    tokenizer.train_from_iterator(
        texts, trainers.BpeTrainer(vocab_size=400, special_tokens=["<|endoftext|>"]))
    tokenizer.save(str(folder / "tokenizer.json"))


def write_data(bucket: Path) -> None:
    """Documents cut from the standard library's sources: text with a shape to learn."""
    text = (Path(sysconfig.get_paths()["stdlib"]) / "argparse.py").read_text()
    folder = bucket / "data"
    folder.mkdir(parents=True)
    cuts = iter(range(0, len(text), DOC_BYTES))
    for f in range(FILES):
        with open(folder / f"train-{f}.jsonl", "w") as out:
            for _ in range(DOCS):
                at = next(cuts)
                out.write(json.dumps({"text": text[at:at + DOC_BYTES]}) + "\n")
    at = next(cuts)
    (folder / "held-out.jsonl").write_text(
        "".join(json.dumps({"text": text[at + i * 600:at + (i + 1) * 600]}) + "\n"
                for i in range(4)))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Group:
    base = tmp_path_factory.mktemp("stream")
    write_data(base / "gcs" / "bucket")
    write_model(base / "llama", base / "gcs" / "bucket")
    args = ["--preset", "tiny", "--steps", str(STEPS), "--seed", "7", "--batch-size", "8",
            "--strategy", "ddp", "--data-files", DATA, "--eval-data-files", HELD_OUT,
            "--eval-every", "6", "--checkpoint-every", "4", "--keep", "0",
            # Units of 512 bytes: the one held-out file is shared by both ranks.
            "--set", "stream.shard_bytes=512"]
    spec = {"runs": [
        {"name": "full", "args": [*args, "--checkpoint-dir", str(base / "full")]},
        {"name": "stopped", "args": [*args, "--checkpoint-dir", str(base / "resume")],
         "sigterm_at": SIGTERM_AT},
        {"name": "resumed", "args": [*args, "--checkpoint-dir", str(base / "resume")]},
        # Tensor parallel over both ranks: one data-parallel rank, whose data both read.
        {"name": "tp", "args": [*args, "--steps", "2", "--set", "tp=2",
                                "--checkpoint-dir", str(base / "tp")]},
        {"name": "llama", "args": [
            *args, "--steps", "2", "--model-config", str(base / "llama" / "config.json"),
            "--tokenizer", str(base / "llama" / "tokenizer.json"),
            "--checkpoint-dir", str(base / "llama-ckpt")]},
    ]}
    (base / "spec.json").write_text(json.dumps(spec))
    replicas = start_world([str(base / "spec.json")], module="tests.trainers.strategy_group",
                           FAKE_GCS_ROOT=str(base / "gcs"))
    results = finish_all(replicas, timeout=180)
    for result in results:
        assert result.returncode == 0, result.stderr[-5000:]
    return Group(results[0], base)


def stream_state(checkpoint: Path, rank: int) -> dict:
    name = "trainer.pt" if rank == 0 else f"rng-rank-{rank:05d}.pt"
    return torch.load(checkpoint / name, weights_only=True)["stream"]


def test_a_stopped_and_resumed_run_trains_on_the_uninterrupted_runs_batches(runs):
    full = runs.losses("full")
    assert sorted(full) == list(range(1, STEPS + 1))
    assert runs.exit_code("stopped") == 143
    stopped_at = runs.of("stopped", "preempted")[0]["step"]
    assert stopped_at == SIGTERM_AT + 1
    assert runs.losses("stopped") == {s: full[s] for s in range(1, stopped_at + 1)}

    assert runs.exit_code("resumed") == 0
    assert runs.of("resumed", "resumed")[0]["step"] == stopped_at
    assert runs.losses("resumed") == {s: full[s] for s in range(stopped_at + 1, STEPS + 1)}
    # Evaluation reads the held-out files: the same batches, so the same figure at the end.
    (final_eval,) = [e for e in runs.of("resumed", "eval") if e["step"] == STEPS]
    assert final_eval["metrics"] == runs.of("full", "eval")[-1]["metrics"]

    # The stop came mid-epoch on both ranks, and the runs went on into the next epoch.
    for rank in (0, 1):
        stopped = stream_state(runs.base / "resume" / f"step-{stopped_at:08d}", rank)
        assert stopped["dataset"]["index"] == rank and stopped["dataset"]["count"] == 2
        assert stopped["epoch"] == 0 and stopped["draws"] == 4 * stopped_at
        assert stream_state(runs.base / "full" / f"step-{STEPS:08d}", rank)["epoch"] >= 1


def test_ranks_that_split_one_model_read_the_same_data(runs):
    assert runs.exit_code("tp") == 0
    states = [stream_state(runs.base / "tp" / f"step-{2:08d}", rank) for rank in (0, 1)]
    assert states[0]["dataset"]["count"] == 1
    assert states[0] == states[1]


def test_a_hugging_face_model_streams_text_tokenized_with_its_tokenizer(runs):
    assert runs.exit_code("llama") == 0
    state = stream_state(runs.base / "llama-ckpt" / f"step-{2:08d}", 0)
    held = [*state["pending"], *(t for row in state["buffer"] for t in row)]
    eos = Tokenizer.from_file(str(runs.base / "llama" / "tokenizer.json")).token_to_id(
        "<|endoftext|>")
    assert max(held) >= 256 and eos in held  # BPE merges and the tokenizer's end of text
