"""Streamed data (trainers/stream/): sharded JSONL, Parquet and token files packed into the
sequences a direct tokenization gives, split disjointly between ranks, read in bounded memory,
and continued exactly from a saved position."""

from __future__ import annotations

import json
import uuid

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

from trainers.stream import StreamChanged, StreamConfig, TextEncoder, open_stream
from trainers.stream.sources import PIECE_TOKENS

pytestmark = pytest.mark.trainers

EOS = "<|endoftext|>"
BLOCK = 16
FILES = 4
DOCS_PER_FILE = 6
TAKEN = 120  # sequences a rank reads in the restore test: more than its epoch holds


def document(file: int, doc: int) -> str:
    return f"file {file} document {doc}: " + "the quick brown fox jumps. " * (1 + (file + doc) % 4)


DOCUMENTS = {f: [document(f, d) for d in range(DOCS_PER_FILE)] for f in range(FILES)}


@pytest.fixture(scope="module")
def tokenizer_path(tmp_path_factory) -> str:
    """A small BPE tokenizer.json trained here, with an end-of-text token."""
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=[EOS])
    tokenizer.train_from_iterator([t for docs in DOCUMENTS.values() for t in docs], trainer)
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    tokenizer.save(str(path))
    return str(path)


def write_jsonl(folder: str, fs: fsspec.AbstractFileSystem) -> str:
    for f, docs in DOCUMENTS.items():
        with fs.open(f"{folder}/train-{f}.jsonl", "w") as out:
            out.writelines(json.dumps({"id": d, "text": t}) + "\n" for d, t in enumerate(docs))
    return f"{folder}/train-*.jsonl"


def write_parquet(folder: str, fs: fsspec.AbstractFileSystem) -> str:
    for f, docs in DOCUMENTS.items():
        with fs.open(f"{folder}/part-{f}.parquet", "wb") as out:
            pq.write_table(pa.table({"body": docs}), out, row_group_size=2)  # 3 row groups
    return folder


def token_files(vocab: int = 256) -> dict[int, np.ndarray]:
    rng = np.random.default_rng(0)
    return {f: rng.integers(0, vocab, size=1000 + 37 * f).astype(np.uint16) for f in range(3)}


def write_tokens(folder: str, fs: fsspec.AbstractFileSystem) -> str:
    for f, tokens in token_files().items():
        with fs.open(f"{folder}/tokens-{f}.bin", "wb") as out:
            out.write(tokens.tobytes())
    return f"{folder}/tokens-*.bin"


def stream_of(pattern: str, encoder: TextEncoder, index: int = 0, count: int = 1,
              buffer: int = 1, **settings):
    config = StreamConfig(data_files=pattern, **settings)
    return open_stream(pattern, config, encoder, index=index, count=count, seed=5,
                       block_size=BLOCK, buffer_sequences=buffer)


def expected_tokens(stream, direct) -> np.ndarray:
    """The rank's first epoch, tokenized directly: its units' documents in its order."""
    parts = [direct(stream.units[u]) for u in stream.order]
    return np.concatenate(parts)


def packed(tokens: np.ndarray) -> np.ndarray:
    """Sequences of BLOCK + 1 tokens, each starting on the last token of the one before."""
    starts = range(0, len(tokens) - BLOCK, BLOCK)
    return np.stack([tokens[s:s + BLOCK + 1] for s in starts]).astype(np.int64)


def bpe(tokenizer_path: str, eos_id: int | None = None):
    tokenizer = Tokenizer.from_file(tokenizer_path)
    eos = tokenizer.token_to_id(EOS) if eos_id is None else eos_id
    return lambda text: [*tokenizer.encode(text, add_special_tokens=False).ids, eos]


@pytest.fixture(params=["local", "memory"])
def location(request, tmp_path):
    """A local folder, or an object store through fsspec (memory://, as gs:// would be)."""
    if request.param == "local":
        yield str(tmp_path), fsspec.filesystem("file")
        return
    fs = fsspec.filesystem("memory")
    folder = f"memory://stream-{uuid.uuid4().hex[:8]}"
    yield folder, fs
    fs.rm(folder, recursive=True)


@pytest.mark.parametrize("count", [1, 3])
@pytest.mark.parametrize("shard_bytes", [1 << 26, 150])  # whole files; cut within lines
def test_sharded_jsonl_packs_the_tokenized_documents(location, tokenizer_path, count,
                                                     shard_bytes):
    folder, fs = location
    pattern = write_jsonl(folder, fs)
    encode = bpe(tokenizer_path)
    encoder = TextEncoder(tokenizer_path, None, vocab_size=320)

    def direct(unit):
        """The documents of the lines that start in the unit's bytes."""
        lines = fs.cat_file(unit.path).splitlines(keepends=True)
        starts = np.cumsum([0] + [len(line) for line in lines])
        return [t for line, at in zip(lines, starts, strict=False)
                if unit.start <= at < unit.stop for t in encode(json.loads(line)["text"])]

    for index in range(count):
        stream = stream_of(pattern, encoder, index, count, shard_bytes=shard_bytes)
        files = len({u.path for u in stream.units})
        assert files == FILES and (len(stream.units) > files) == (shard_bytes == 150)
        want = packed(np.array([t for u in stream.order for t in direct(stream.units[u])]))
        assert np.array_equal(stream.take(len(want)), want)


def test_parquet_row_groups_pack_the_documents_of_a_named_column(location):
    folder = write_parquet(*location)
    encoder = TextEncoder(None, 3, vocab_size=256)  # bytes, documents ended by token 3
    stream = stream_of(folder, encoder, text_field="body")
    assert len(stream.units) == FILES * 3  # a unit per row group

    def direct(unit):
        file = int(unit.path.rsplit("-", 1)[1].split(".")[0])
        docs = DOCUMENTS[file][2 * unit.part:2 * unit.part + 2]
        return np.concatenate([[*d.encode(), 3] for d in docs])

    want = packed(expected_tokens(stream, direct))
    assert np.array_equal(stream.take(len(want)), want)


@pytest.mark.parametrize("kind", ["bin", "npy"])
def test_token_files_are_read_in_chunks_without_tokenizing(location, kind):
    folder, fs = location
    if kind == "bin":
        pattern = write_tokens(folder, fs)
    else:
        for f, tokens in token_files().items():
            with fs.open(f"{folder}/tokens-{f}.npy", "wb") as out:
                np.save(out, tokens.astype(np.uint32))
        pattern = folder
    encoder = TextEncoder(None, None, vocab_size=256)
    stream = stream_of(pattern, encoder, shard_tokens=300)
    files = token_files()
    assert len(stream.units) == sum(-(-len(t) // 300) for t in files.values())

    def direct(unit):
        return files[int(unit.path.rsplit("-", 1)[1].split(".")[0])][unit.start:unit.stop]

    want = packed(expected_tokens(stream, direct))
    assert np.array_equal(stream.take(len(want)), want)


def test_ranks_portions_are_disjoint_and_cover_every_unit_each_epoch(tmp_path):
    pattern = write_tokens(str(tmp_path), fsspec.filesystem("file"))
    encoder = TextEncoder(None, None, vocab_size=256)
    for epoch in (0, 1):
        portions = [stream_of(pattern, encoder, r, 3, shard_tokens=100)._order(epoch)
                    for r in range(3)]
        units = [u for p in portions for u in p]
        every = stream_of(pattern, encoder, shard_tokens=100).units
        assert sorted(units) == list(range(len(every)))
    # Shuffled by the seed and the epoch: not file order, and another order the next epoch.
    stream = stream_of(pattern, encoder, shard_tokens=100)
    assert stream._order(0) != sorted(stream._order(0)) != stream._order(1)


def test_memory_stays_bounded_by_the_buffer_whatever_the_data_size(tmp_path):
    tokens = np.random.default_rng(1).integers(0, 256, size=400_000).astype(np.uint16)
    (tmp_path / "big.bin").write_bytes(tokens.tobytes())
    encoder = TextEncoder(None, None, vocab_size=256)
    stream = stream_of(str(tmp_path / "big.bin"), encoder, buffer=4)
    rows = stream.take(6000)  # 96,000 tokens: many pieces and a unit of 4M tokens
    assert len(np.unique(rows[:, 0])) > 200
    bound = 4 * (BLOCK + 1) + (BLOCK + 1) + PIECE_TOKENS
    assert stream.peak_buffered_tokens <= bound < len(tokens) // 40


@pytest.mark.parametrize("kind", ["jsonl", "parquet", "bin"])
def test_a_restored_position_continues_exactly_where_it_was(tmp_path, tokenizer_path, kind):
    """N draws, state through JSON, a fresh reader restored, M more == N + M straight, on
    several ranks and across the end of an epoch."""
    fs = fsspec.filesystem("file")
    if kind == "jsonl":
        pattern, encoder, settings = write_jsonl(str(tmp_path), fs), TextEncoder(
            tokenizer_path, None, 320), {}
    elif kind == "parquet":
        pattern, encoder, settings = write_parquet(str(tmp_path), fs), TextEncoder(
            None, None, 256), {"text_field": "body"}
    else:
        pattern, encoder, settings = write_tokens(str(tmp_path), fs), TextEncoder(
            None, None, 256), {"shard_tokens": 250}
    for index in range(2):
        straight = stream_of(pattern, encoder, index, 2, buffer=4, **settings)
        rows = straight.take(TAKEN)
        assert straight.epoch >= 1, "the reads must cross an epoch"
        for n in (0, 9, 23):
            first = stream_of(pattern, encoder, index, 2, buffer=4, **settings)
            first.take(n)
            state = json.loads(json.dumps(first.state()))
            resumed = stream_of(pattern, encoder, index, 2, buffer=4, **settings)
            resumed.restore(state)
            assert np.array_equal(resumed.take(TAKEN - n), rows[n:])


def test_a_position_saved_for_another_split_or_other_data_is_refused(tmp_path):
    pattern = write_tokens(str(tmp_path), fsspec.filesystem("file"))
    encoder = TextEncoder(None, None, vocab_size=256)
    saved = stream_of(pattern, encoder, 0, 2, shard_tokens=100)
    saved.take(3)
    state = saved.state()
    with pytest.raises(StreamChanged, match="saved data position is for"):
        stream_of(pattern, encoder, 0, 3, shard_tokens=100).restore(state)  # 3 ranks now
    with pytest.raises(StreamChanged):
        stream_of(pattern, encoder, 0, 2, shard_tokens=50).restore(state)  # other units
    stream_of(pattern, encoder, 0, 2, shard_tokens=100).restore(state)
