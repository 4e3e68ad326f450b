"""The documents of one unit, from a position on: (position, tokens) pairs, where a position is
what reopens the unit at that document (a byte offset in a JSONL file, a row of a Parquet row
group, a token of a token file). Only the current document is held in memory.

A JSONL unit is a range of bytes: it holds the lines that start in it (the first ends the line
it starts in the middle of, the last reads on past its end to finish its own).

Token files have no documents: they are read in pieces of PIECE_TOKENS tokens, through a
memory map on a local disk and ranged reads on an object store.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np

from trainers.storage import storage_for
from trainers.stream.files import Unit
from trainers.stream.tokens import TextEncoder

PIECE_TOKENS = 8192
PARQUET_BATCH_ROWS = 64

Documents = Iterator[tuple[int, np.ndarray]]


def documents(unit: Unit, start: int | None, encoder: TextEncoder, text_field: str) -> Documents:
    if unit.kind == "jsonl":
        return _jsonl(unit, start, encoder, text_field)
    if unit.kind == "parquet":
        return _parquet(unit, start or 0, encoder, text_field)
    return _tokens(unit, unit.start if start is None else start, encoder.vocab_size)


def _jsonl(unit: Unit, start: int | None, encoder: TextEncoder, field: str) -> Documents:
    """The lines that start within the unit's bytes [start, stop)."""
    path = unit.path
    with storage_for(path).open_read(path) as f:
        if start is None and unit.start > 0:
            f.seek(unit.start - 1)
            position = unit.start - 1 + len(f.readline())  # the rest of the line before
        else:
            position = unit.start if start is None else start
            f.seek(position)
        while position < unit.stop and (line := f.readline()):
            here, position = position, position + len(line)
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{path}, line {_line_number(path, here)}: {exc}") from None
            text = record.get(field) if isinstance(record, dict) else None
            if not isinstance(text, str):
                raise ValueError(
                    f"{path}, line {_line_number(path, here)}: no text field {field!r} "
                    "(--text-field)")
            yield here, encoder.encode(text)


def _line_number(path: str, offset: int) -> int:
    """The 1-based line at byte `offset`: counted only for an error message."""
    with storage_for(path).open_read(path) as f:
        return f.read(offset).count(b"\n") + 1


def _parquet(unit: Unit, start: int, encoder: TextEncoder, column: str) -> Documents:
    import pyarrow.parquet as pq

    with storage_for(unit.path).open_read(unit.path) as f:
        batches = pq.ParquetFile(f).iter_batches(
            batch_size=PARQUET_BATCH_ROWS, row_groups=[unit.part], columns=[column])
        row = 0
        for batch in batches:
            if row + batch.num_rows <= start:
                row += batch.num_rows
                continue
            for text in batch.column(0).to_pylist():
                if row >= start:
                    if text is None:
                        raise ValueError(
                            f"{unit.path}: row {row} of row group {unit.part} has no "
                            f"{column!r} (null)")
                    yield row, encoder.encode(text)
                row += 1


def _tokens(unit: Unit, start: int, vocab_size: int) -> Documents:
    storage = storage_for(unit.path)
    dtype = np.dtype(unit.dtype)
    if storage.local:
        tokens = np.memmap(unit.path, dtype=dtype, mode="r", offset=unit.header,
                           shape=(unit.stop,))
        for at in range(start, unit.stop, PIECE_TOKENS):
            yield at, _checked(unit, at, np.array(tokens[at:at + PIECE_TOKENS]), vocab_size)
        return
    with storage.open_read(unit.path) as f:
        for at in range(start, unit.stop, PIECE_TOKENS):
            count = min(PIECE_TOKENS, unit.stop - at)
            f.seek(unit.header + at * dtype.itemsize)
            piece = np.frombuffer(f.read(count * dtype.itemsize), dtype=dtype)
            yield at, _checked(unit, at, piece, vocab_size)


def _checked(unit: Unit, at: int, piece: np.ndarray, vocab_size: int) -> np.ndarray:
    bad = np.flatnonzero((piece < 0) | (piece >= vocab_size))
    if len(bad):
        raise ValueError(
            f"{unit.path}: token {int(piece[bad[0]])} at position {at + int(bad[0])} is outside "
            f"the model's vocabulary (vocab_size {vocab_size})")
    return piece.astype(np.uint32)
