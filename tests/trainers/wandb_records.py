"""Read a W&B run file (`run-<id>.wandb`) the way wandb writes it: a LevelDB-style log of
`wandb.proto.wandb_internal_pb2.Record` messages after a 7-byte header (":W&B", magic 0xBEE1,
version), in 32 KiB blocks of records each with a 7-byte header (CRC-32C, length, kind), a
record split over blocks as FIRST, MIDDLE..., LAST."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

from wandb.proto import wandb_internal_pb2

HEADER = struct.Struct("<4sHB")
RECORD_HEADER = struct.Struct("<IHB")
BLOCK = 32 * 1024
FULL, FIRST, MIDDLE, LAST = 1, 2, 3, 4


def records(path: Path) -> list[wandb_internal_pb2.Record]:
    data = path.read_bytes()
    ident, magic, _version = HEADER.unpack_from(data)
    assert (ident, magic) == (b":W&B", 0xBEE1), f"{path} is not a W&B run file"
    found, pending, pos = [], b"", HEADER.size
    while pos + RECORD_HEADER.size <= len(data):
        left = BLOCK - pos % BLOCK
        if left < RECORD_HEADER.size:  # a block's tail too short for a header is padding
            pos += left
            continue
        _crc, length, kind = RECORD_HEADER.unpack_from(data, pos)
        if kind == 0:  # zeros: the end of what was written
            break
        chunk = data[pos + RECORD_HEADER.size:pos + RECORD_HEADER.size + length]
        pos += RECORD_HEADER.size + length
        pending = chunk if kind in (FULL, FIRST) else pending + chunk
        if kind in (FULL, LAST):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending)
            found.append(record)
            pending = b""
    return found


def history(path: Path) -> dict[int, dict[str, Any]]:
    """step -> {metric: value} of every history row the run logged."""
    rows: dict[int, dict[str, Any]] = {}
    for record in records(path):
        if record.WhichOneof("record_type") != "history":
            continue
        row = {(item.key or "/".join(item.nested_key)): json.loads(item.value_json)
               for item in record.history.item}
        rows.setdefault(int(record.history.step.num), {}).update(row)
    return rows


def config(path: Path) -> dict[str, Any]:
    """The run's config: the run record's, then any later config records' updates."""
    values: dict[str, Any] = {}
    for record in records(path):
        kind = record.WhichOneof("record_type")
        updates = (record.run.config.update if kind == "run" else
                   record.config.update if kind == "config" else ())
        for item in updates:
                values[item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
    return values
