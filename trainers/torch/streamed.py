"""The PyTorch trainer's batches from streamed files (`--data-files`, trainers/stream/): this
data-parallel rank's share of every global batch, and of the held-out batches.

Every rank opens its streams and reads one batch's worth before training, so a missing field,
a token outside the vocabulary or a portion smaller than one batch fails at the start. The
ranks then agree on whether all of them could: a rank whose data is fine would otherwise wait
in the strategy's first collective for one that has already exited.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import torch

from contract import events as contract_events
from trainers import events
from trainers.stream import StreamChanged, TextEncoder, TokenStream, open_stream
from trainers.torch.config import TrainConfig
from trainers.torch.distributed import on_every_rank

Batch = tuple[torch.Tensor, torch.Tensor]


class StreamedBatches:
    def __init__(self, config: TrainConfig, shard: int, shards: int, tokenizer: str | None,
                 vocab_size: int) -> None:
        stream = config.stream
        assert stream.data_files
        self.config, self.shard, self.shards = config, shard, shards
        self.per_rank = config.batch_size // shards
        self.encoder = TextEncoder(tokenizer, stream.eos_id, vocab_size)
        self._open(stream.data_files).check_first_batch(self.per_rank, config.batch_size)
        self.train = self._open(stream.data_files)
        self.held_out: list[Batch] | None = None
        if stream.eval_data_files:
            # Sequential (a buffer of one): held-out batches need no shuffling.
            self._open(stream.eval_data_files, 1).check_first_batch(
                self.per_rank, config.batch_size)

    def _open(self, pattern: str, buffer_sequences: int | None = None) -> TokenStream:
        return open_stream(pattern, self.config.stream, self.encoder, index=self.shard,
                           count=self.shards, seed=self.config.seed,
                           block_size=self.config.model.block_size,
                           buffer_sequences=buffer_sequences)

    def next_batch(self) -> Batch:
        return _split(self.train.take(self.per_rank))

    def eval_batch(self, index: int) -> Batch:
        """Held-out batch `index`: the first eval_batches of the held-out files' stream, read
        once and kept, the same at every evaluation."""
        if self.held_out is None:
            assert self.config.stream.eval_data_files
            held_out = self._open(self.config.stream.eval_data_files, 1)
            self.held_out = [_split(held_out.take(self.per_rank))
                             for _ in range(self.config.eval_batches)]
        return self.held_out[index]

    def state(self) -> dict[str, Any]:
        return self.train.state()

    def resume(self, state: dict[str, Any] | None, rank: int) -> None:
        """Continue from a checkpoint's position; one saved for other data (or none, from
        the corpus) leaves the stream at its start, with a warning."""
        try:
            if state is None:
                raise StreamChanged("the checkpoint holds no stream position (corpus data)")
            self.train.restore(state)
        except StreamChanged as exc:
            events.emit(contract_events.DATA_CHANGED,
                        f"the data stream starts over on rank {rank}: {exc}",
                        severity="WARNING", rank=rank)


def evaluated(config: TrainConfig) -> TrainConfig:
    """Streamed data without held-out files is not evaluated: the default corpus is other text,
    whose loss would say nothing about this model."""
    if config.stream.data_files and not config.stream.eval_data_files:
        return replace(config, eval_every=0)
    return config


def open_batches(config: TrainConfig, shard: int, shards: int, *, tokenizer: str | None,
                 vocab_size: int, device: str) -> StreamedBatches | None:
    """The streamed batches of data-parallel rank `shard` of `shards`, text tokenized with
    `tokenizer` (None: bytes) for a model of `vocab_size` tokens; None without --data-files.
    Every rank or none gets them."""
    if not config.stream.data_files:
        return None
    return on_every_rank(
        lambda: StreamedBatches(config, shard, shards, tokenizer, vocab_size), device, "the data")


def _split(rows: np.ndarray) -> Batch:
    tensor = torch.from_numpy(rows)
    return tensor[:, :-1], tensor[:, 1:]
