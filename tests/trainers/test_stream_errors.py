"""Streamed data that cannot train is refused before the first step, saying what and where."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tokenizers import Tokenizer, models

from tests.trainers.replicas import train
from trainers.stream import StreamConfig, TextEncoder, open_stream, stream_problems
from trainers.torch.config import preset
from trainers.torch.streamed import evaluated

pytestmark = pytest.mark.trainers

BYTES = TextEncoder(None, None, vocab_size=256)


def first_batch(pattern: str, sequences: int = 2, count: int = 1, **settings) -> None:
    config = StreamConfig(data_files=pattern, **settings)
    for index in range(count):
        stream = open_stream(pattern, config, BYTES, index=index, count=count, seed=1,
                             block_size=8)
        stream.check_first_batch(sequences, sequences * count)


def test_a_pattern_that_matches_nothing_is_named(tmp_path):
    pattern = str(tmp_path / "train-*.jsonl")
    with pytest.raises(ValueError, match=re.escape(f"no data files match '{pattern}'")):
        first_batch(pattern)
    with pytest.raises(ValueError, match="no data files match"):
        first_batch(str(tmp_path))  # an empty folder


def test_a_jsonl_line_without_the_text_field_names_the_file_and_line(tmp_path):
    path = tmp_path / "a.jsonl"
    lines = [{"text": "x" * 40}, {"text": "y" * 40}, {"body": "no text here"}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(ValueError, match=f"{path}, line 3: no text field 'text'"):
        first_batch(str(path), sequences=20)
    first_batch(str(path), sequences=2)  # what precedes the bad line is fine


def test_a_parquet_file_without_the_column_lists_its_columns(tmp_path):
    pq.write_table(pa.table({"body": ["a"], "id": [1]}), tmp_path / "p.parquet")
    with pytest.raises(ValueError, match=r"p.parquet: no column 'text' \(--text-field\); its "
                                         r"columns: body, id"):
        first_batch(str(tmp_path / "p.parquet"))


def test_a_token_outside_the_vocabulary_names_the_file_and_position(tmp_path):
    tokens = np.arange(100, dtype=np.uint16) % 256
    tokens[57] = 300
    (tmp_path / "t.bin").write_bytes(tokens.tobytes())
    with pytest.raises(ValueError, match=r"t.bin: token 300 at position 57 is outside the "
                                         r"model's vocabulary \(vocab_size 256\)"):
        first_batch(str(tmp_path / "t.bin"))


def test_a_portion_smaller_than_one_batch_is_refused(tmp_path):
    (tmp_path / "t.bin").write_bytes(np.arange(60, dtype=np.uint16).tobytes())
    with pytest.raises(ValueError, match=r"rank 0 of 2 reads 3 sequences of 9 tokens from .*, "
                                         r"fewer than its share \(4\) of one global batch of 8"):
        first_batch(str(tmp_path / "t.bin"), sequences=4, count=2, shard_tokens=30)
    with pytest.raises(ValueError, match="rank 2 of 3 has nothing to read"):
        first_batch(str(tmp_path / "t.bin"), count=3, shard_tokens=30)


def test_a_tokenizer_must_fit_the_model_and_name_its_end_of_text(tmp_path):
    path = tmp_path / "tokenizer.json"
    Tokenizer(models.WordLevel({f"w{i}": i for i in range(300)}, unk_token="w0")).save(str(path))
    with pytest.raises(ValueError, match="has 300 tokens, more than the model's vocab_size 256"):
        TextEncoder(str(path), None, vocab_size=256)
    with pytest.raises(ValueError, match=r"none of the end-of-text tokens .*--eos-id"):
        TextEncoder(str(path), None, vocab_size=512)
    assert TextEncoder(str(path), 7, vocab_size=512).encode("w3 w5")[-1] == 7


def test_the_trainer_refuses_bad_data_before_its_first_step(tmp_path):
    """Through the command line: the error event names the file and line, exit 1."""
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps({"text": "fine " * 50}) + "\n" + json.dumps({"t": 1}) + "\n")
    result = train(["--preset", "tiny", "--strategy", "single", "--steps", "2", "--batch-size",
                    "8", "--data-files", str(path)])
    assert result.returncode == 1
    assert not result.of("step")
    (error,) = result.of("error")
    assert f"{path}, line 2: no text field 'text'" in error["message"]


def test_settings_that_contradict_each_other_are_refused():
    both = stream_problems(StreamConfig(data_files="a/*.jsonl"), corpus_file="text.txt")
    assert both == ["--data (a text file read whole) and --data-files (streamed files) both "
                    "name the training data: give one"]
    assert stream_problems(StreamConfig(eval_data_files="v.jsonl")) == [
        "--eval-data-files needs --data-files"]
    assert stream_problems(StreamConfig(data_files="a", shard_bytes=0, token_dtype="int8")) == [
        "stream.token_dtype must be one of uint16, uint32, not 'int8'",
        "stream.shard_bytes must be >= 1"]


def test_a_stream_without_held_out_files_is_not_evaluated():
    """The default corpus is other text than the stream: its loss would say nothing."""
    tiny = preset("tiny")
    assert tiny.eval_every > 0
    streamed = replace(tiny, stream=StreamConfig(data_files="d/*.jsonl"))
    assert evaluated(streamed).eval_every == 0
    held_out = replace(tiny, stream=StreamConfig(data_files="d/*.jsonl", eval_data_files="v"))
    assert evaluated(held_out) == held_out
    assert evaluated(tiny) == tiny
