"""One rank's stream of packed sequences, and its position as state.

The rank's units for epoch e are its share of the units shuffled by (seed, e); within a unit,
documents come in file order. Tokens are appended to a partial sequence; a full one (block_size
+ 1 tokens) goes to the shuffle buffer, and the next starts on its last token. A draw takes a
random slot of the buffer (the generator is seeded by (seed, rank, draw number), so the draw
count is its whole state) and refills it. Epochs follow each other without end: the schedule,
not the data, says when training stops.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from trainers.stream.config import StreamConfig
from trainers.stream.files import Unit, list_files, list_units
from trainers.stream.sources import Documents, documents
from trainers.stream.tokens import TextEncoder

STATE_VERSION = 1
# Streams of random numbers, kept apart from each other and from the corpus's (trainers/corpus.py).
ORDER_STREAM = 11
SHUFFLE_STREAM = 12


class StreamChanged(ValueError):
    """A saved position that belongs to other data, another split of it, or other sequences."""


class TokenStream:
    def __init__(self, pattern: str, units: list[Unit], *, index: int, count: int, seed: int,
                 block_size: int, buffer_sequences: int, encoder: TextEncoder,
                 text_field: str) -> None:
        self.pattern, self.units = pattern, units
        self.index, self.count, self.seed = index, count, seed
        self.block_size, self.buffer_size = block_size, buffer_sequences
        self.encoder, self.text_field = encoder, text_field
        digest = hashlib.sha256("\n".join(u.describe() for u in units).encode()).hexdigest()
        # What a saved position is only valid for.
        self.dataset = {"units": digest[:16], "index": index, "count": count, "seed": seed,
                        "block_size": block_size, "buffer_sequences": buffer_sequences}
        self.peak_buffered_tokens = 0
        self._start_at(epoch=0, slot=0, doc=None, cursor=0, pending=[])
        self.buffer: np.ndarray | None = None  # filled on the first draw
        self.draws = 0

    # -- the position ------------------------------------------------------------------------

    def _start_at(self, epoch: int, slot: int, doc: int | None, cursor: int,
                  pending: list[int]) -> None:
        self.epoch, self.slot = epoch, slot
        self.order = self._order(epoch)
        self.doc_position, self.cursor = doc, cursor  # cursor: the doc's tokens already used
        self.pending = np.asarray(pending, dtype=np.uint32)
        self.docs: Documents | None = None
        self.doc: np.ndarray | None = None

    def _order(self, epoch: int) -> list[int]:
        shuffled = np.random.default_rng([self.seed, ORDER_STREAM, epoch]).permutation(
            len(self.units))
        mine = [int(u) for u in shuffled[self.index::self.count]]
        if not mine:
            raise ValueError(
                f"data-parallel rank {self.index} of {self.count} has nothing to read in "
                f"{self.pattern}: {len(self.units)} units (Parquet row groups, chunks of "
                "stream.shard_bytes of JSONL, of stream.shard_tokens tokens) for that many "
                "ranks; write more files or set a smaller unit (--set stream.shard_bytes=N)")
        return mine

    def state(self) -> dict[str, Any]:
        """JSON-serialisable: where the next sequence comes from, and the buffer's content."""
        return {
            "version": STATE_VERSION,
            "dataset": dict(self.dataset),
            "epoch": self.epoch,
            "slot": self.slot,
            "doc": self.doc_position,
            "cursor": self.cursor,
            "pending": self.pending.tolist(),
            "buffer": None if self.buffer is None else self.buffer.tolist(),
            "draws": self.draws,
        }

    def restore(self, state: dict[str, Any]) -> None:
        if state.get("version") != STATE_VERSION or state.get("dataset") != self.dataset:
            raise StreamChanged(
                f"the saved data position is for {state.get('dataset')}, this stream is "
                f"{self.dataset}")
        self._close()
        self._start_at(state["epoch"], state["slot"], state["doc"], state["cursor"],
                       state["pending"])
        buffer = state["buffer"]
        self.buffer = None if buffer is None else np.asarray(buffer, dtype=np.uint32)
        self.draws = state["draws"]

    # -- sequences ---------------------------------------------------------------------------

    def take(self, n: int) -> np.ndarray:
        """The next `n` sequences, int64 (n, block_size + 1)."""
        if self.buffer is None:
            self.buffer = np.stack([self._next_sequence() for _ in range(self.buffer_size)])
        rows = np.empty((n, self.block_size + 1), dtype=np.int64)
        for i in range(n):
            rng = np.random.default_rng([self.seed, SHUFFLE_STREAM, self.index, self.draws])
            slot = int(rng.integers(self.buffer_size))
            self.draws += 1
            rows[i] = self.buffer[slot]
            self.buffer[slot] = self._next_sequence()
        return rows

    def check_first_batch(self, sequences: int, batch_size: int) -> None:
        """Refuse a portion smaller than this rank's share of one global batch (call on a
        fresh stream: it reads that much, checking the documents on the way)."""
        found = self.sequences_in_first_epoch(sequences)
        if found < sequences:
            raise ValueError(
                f"data-parallel rank {self.index} of {self.count} reads {found} sequences of "
                f"{self.block_size + 1} tokens from {self.pattern}, fewer than its share "
                f"({sequences}) of one global batch of {batch_size}: give more data or a "
                "smaller --batch-size")

    def sequences_in_first_epoch(self, at_most: int) -> int:
        """How many sequences the first epoch holds, counted up to `at_most` (on a fresh stream:
        it reads them, and checks their documents on the way)."""
        found = 0
        while found < at_most:
            self._next_sequence()
            if self.epoch > 0:
                break
            found += 1
        return found

    def _next_sequence(self) -> np.ndarray:
        need = self.block_size + 1
        while len(self.pending) < need:
            doc = self._current_doc()
            take = doc[self.cursor:self.cursor + need - len(self.pending)]
            self.pending = np.concatenate([self.pending, take])
            self.cursor += len(take)
            self._note_memory()
        sequence, self.pending = self.pending[:need], self.pending[need - 1:].copy()
        return sequence

    def _current_doc(self) -> np.ndarray:
        """The document the next tokens come from. One used up is left only when more tokens
        are needed, so an epoch ends when a token of the next one is read, not before."""
        if self.doc is None:
            self._open_unit()
        assert self.doc is not None
        while self.cursor >= len(self.doc):
            self._next_doc()
        return self.doc

    def _open_unit(self) -> None:
        """Open the unit at `slot` at the document at `doc_position` (its start for None),
        moving to the next units while one holds no documents from there on."""
        empty = 0
        while True:
            unit = self.units[self.order[self.slot]]
            self.docs = documents(unit, self.doc_position, self.encoder, self.text_field)
            pulled = next(self.docs, None)
            if pulled is not None:
                self.doc_position, self.doc = pulled
                return
            empty += 1
            if empty > len(self.units):
                raise ValueError(f"{self.pattern}: this rank's files hold no documents")
            self._next_unit()

    def _next_doc(self) -> None:
        assert self.docs is not None
        pulled = next(self.docs, None)
        self.cursor = 0
        if pulled is None:
            self._next_unit()
            self._open_unit()
        else:
            self.doc_position, self.doc = pulled

    def _next_unit(self) -> None:
        self._close()
        self.slot += 1
        self.doc_position, self.cursor = None, 0
        if self.slot == len(self.order):
            self.epoch, self.slot = self.epoch + 1, 0
            self.order = self._order(self.epoch)

    def _close(self) -> None:
        if self.docs is not None:
            self.docs.close()  # the unit's file
            self.docs = None

    def _note_memory(self) -> None:
        held = len(self.pending) + (0 if self.doc is None else len(self.doc))
        if self.buffer is not None:
            held += self.buffer.size
        else:
            held += self.buffer_size * (self.block_size + 1)  # filling: counted as full
        self.peak_buffered_tokens = max(self.peak_buffered_tokens, held)


def open_stream(pattern: str, stream: StreamConfig, encoder: TextEncoder, *, index: int,
                count: int, seed: int, block_size: int, buffer_sequences: int | None = None,
                ) -> TokenStream:
    """Data-parallel rank `index` of `count`'s stream of the files `pattern` names."""
    files = list_files(pattern)
    units = list_units(files, stream.text_field, stream.token_dtype, stream.shard_tokens,
                       stream.shard_bytes)
    return TokenStream(
        pattern, units, index=index, count=count, seed=seed, block_size=block_size,
        buffer_sequences=buffer_sequences or stream.buffer_sequences, encoder=encoder,
        text_field=stream.text_field)
