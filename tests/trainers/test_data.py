"""Batches are a pure function of (seed, step), whatever the world size."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from trainers.corpus import (
    EVAL_STREAM,
    batch_offsets,
    load_corpus,
    rank_rows,
    stdlib_source_files,
)
from trainers.torch.data import local_batch, make_batch

pytestmark = pytest.mark.trainers

CAP = 256 * 1024


@pytest.fixture(scope="module")
def corpus():
    return load_corpus(None, CAP, block_size=64)


def test_stdlib_corpus_is_sorted_capped_and_stable(corpus):
    files = stdlib_source_files()
    assert files == sorted(files)
    assert not any("site-packages" in f or "__pycache__" in f for f in files)
    assert len(corpus.train) + len(corpus.val) == CAP
    again = load_corpus(None, CAP, block_size=64)
    assert again.sha256 == corpus.sha256
    assert np.array_equal(again.train, corpus.train)
    assert corpus.source.startswith("python-stdlib:")


def test_a_text_file_can_be_the_corpus(tmp_path):
    path = tmp_path / "text.txt"
    path.write_bytes(b"hello world\n" * 100)
    corpus = load_corpus(str(path), 10_000, block_size=8)
    assert corpus.source == str(path)
    assert bytes(corpus.train[:5].tolist()) == b"hello"
    with pytest.raises(ValueError, match="too small"):
        load_corpus(str(path), 10_000, block_size=512)


def test_offsets_depend_only_on_seed_and_step():
    a = batch_offsets(7, 12, 16, 64, 100_000)
    assert np.array_equal(a, batch_offsets(7, 12, 16, 64, 100_000))
    assert not np.array_equal(a, batch_offsets(7, 13, 16, 64, 100_000))
    assert not np.array_equal(a, batch_offsets(8, 12, 16, 64, 100_000))
    assert not np.array_equal(a, batch_offsets(7, 12, 16, 64, 100_000, stream=EVAL_STREAM))
    assert a.min() >= 0 and a.max() <= 100_000 - 64 - 1


@pytest.mark.parametrize("world_size", [1, 2, 4, 8])
def test_rank_slices_concatenate_to_the_global_batch(corpus, world_size):
    seed, step, batch, block = 3, 5, 16, 64
    gx, gy = make_batch(
        corpus.train, batch_offsets(seed, step, batch, block, len(corpus.train)), block
    )
    parts = [
        local_batch(corpus.train, seed, step, batch, block, r, world_size)
        for r in range(world_size)
    ]
    assert torch.equal(torch.cat([x for x, _ in parts]), gx)
    assert torch.equal(torch.cat([y for _, y in parts]), gy)
    assert [rank_rows(batch, r, world_size) for r in range(world_size)][-1].stop == batch


def test_targets_are_the_next_bytes(corpus):
    x, y = local_batch(corpus.train, 1, 1, 4, 32, 0, 1)
    assert x.shape == y.shape == (4, 32)
    assert x.dtype == torch.int64
    assert torch.equal(x[:, 1:], y[:, :-1])
