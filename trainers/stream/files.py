"""The files of a streamed dataset, and the units they split into: what one rank reads at a time.

A unit is `shard_bytes` of a JSONL file (the lines that start in them), one Parquet row group
(its footer lists them), or `shard_tokens` consecutive tokens of a token file. Listing reads
each Parquet footer and .npy header, never the data.
"""

from __future__ import annotations

import glob
import os
import posixpath
from dataclasses import dataclass

import numpy as np

from trainers.storage import FsspecStorage, Storage, storage_for

KINDS = {".jsonl": "jsonl", ".parquet": "parquet", ".npy": "npy", ".bin": "bin"}
TEXT_KINDS = ("jsonl", "parquet")
GLOB_CHARS = "*?["
DESCRIBED = "JSONL .jsonl, Parquet .parquet, token files .npy / .bin"


@dataclass(frozen=True)
class Unit:
    path: str
    kind: str
    part: int = 0  # the row group (Parquet), the chunk (JSONL, token files)
    start: int = 0  # the chunk's first byte (JSONL) or token (token files), and one past its last
    stop: int = 0
    dtype: str = ""  # token files: the tokens' numpy dtype
    header: int = 0  # token files: bytes before the first token (a .npy header)

    def describe(self) -> str:
        return f"{self.path}:{self.part}:{self.start}:{self.stop}"


def kind_of(path: str) -> str | None:
    return KINDS.get(os.path.splitext(path)[1].lower())


def list_files(pattern: str) -> list[str]:
    """The data files `pattern` names (a glob, a folder or a file), sorted."""
    storage = storage_for(pattern)
    if any(c in pattern for c in GLOB_CHARS):
        found = _glob(storage, pattern)
        unknown = [p for p in found if kind_of(p) is None]
        if unknown:
            raise ValueError(
                f"--data-files {pattern!r} matches files of no known kind ({DESCRIBED}): "
                f"{', '.join(unknown[:3])}")
    elif _is_dir(storage, pattern):
        found = [p for p in _walk(storage, pattern) if kind_of(p) is not None]
    elif storage.exists(pattern) and kind_of(pattern) is not None:
        found = [pattern]
    else:
        found = []
    if not found:
        raise ValueError(f"no data files match {pattern!r} ({DESCRIBED})")
    return sorted(found)


def list_units(files: list[str], text_field: str, token_dtype: str, shard_tokens: int,
               shard_bytes: int) -> list[Unit]:
    units: list[Unit] = []
    for path in files:
        kind = kind_of(path)
        if kind == "jsonl":
            size = storage_for(path).size(path)
            units += [Unit(path, kind, part=i, start=start, stop=min(start + shard_bytes, size))
                      for i, start in enumerate(range(0, size, shard_bytes))]
        elif kind == "parquet":
            groups = _parquet_row_groups(path, text_field)
            units += [Unit(path, kind, part=g) for g in range(groups)]
        else:
            dtype, header, length = token_layout(path, kind or "", token_dtype)
            units += [
                Unit(path, kind or "", part=i, start=start, stop=min(start + shard_tokens, length),
                     dtype=dtype, header=header)
                for i, start in enumerate(range(0, length, shard_tokens))
            ]
    return units


def token_layout(path: str, kind: str, token_dtype: str) -> tuple[str, int, int]:
    """(dtype, header bytes, tokens) of a token file."""
    storage = storage_for(path)
    if kind == "bin":
        itemsize = np.dtype(token_dtype).itemsize
        size = storage.size(path)
        if size % itemsize:
            raise ValueError(f"{path}: {size} bytes is not a whole number of {token_dtype} tokens")
        return token_dtype, 0, size // itemsize
    with storage.open_read(path) as f:
        version = np.lib.format.read_magic(f)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, _, dtype = read_header(f)
        header = f.tell()
    if len(shape) != 1 or dtype.kind not in "ui":
        raise ValueError(f"{path}: a token file holds a 1-D integer array, not {dtype} {shape}")
    return dtype.str, header, int(shape[0])


def _parquet_row_groups(path: str, column: str) -> int:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError(f"{path}: Parquet files need pyarrow (pip install pyarrow)") from None

    with storage_for(path).open_read(path) as f:
        parquet = pq.ParquetFile(f)
        schema, groups = parquet.schema_arrow, parquet.num_row_groups
    if column not in schema.names:
        raise ValueError(
            f"{path}: no column {column!r} (--text-field); its columns: {', '.join(schema.names)}")
    kind = schema.field(column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise ValueError(f"{path}: column {column!r} holds {kind}, not text")
    return groups


def _glob(storage: Storage, pattern: str) -> list[str]:
    if isinstance(storage, FsspecStorage):
        return [_with_scheme(pattern, p) for p in storage.fs.glob(pattern)
                if not storage.fs.isdir(p)]
    return [p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)]


def _is_dir(storage: Storage, path: str) -> bool:
    if isinstance(storage, FsspecStorage):
        return bool(storage.fs.isdir(path))
    return os.path.isdir(path)


def _walk(storage: Storage, folder: str) -> list[str]:
    if isinstance(storage, FsspecStorage):
        return [_with_scheme(folder, p) for p in storage.fs.find(folder)]
    return [os.path.join(root, name) for root, _, names in os.walk(folder) for name in names]


def _with_scheme(pattern: str, path: str) -> str:
    """fsspec lists paths without their scheme (bucket/a/b): give them back the pattern's."""
    scheme = pattern.partition("://")[0]
    return path if "://" in path else f"{scheme}://{posixpath.normpath(path)}"
