"""Peak dense FLOP/s per accelerator and precision: the denominator of MFU.

The shipped file ``data/peak_flops.csv`` holds one row per accelerator the catalogue knows
(keyed as ``vertexplan.catalog.describe_machine_spec`` names it: the AcceleratorType enum, or
"TPU v6e" where Vertex has no enum), each figure with its datasheet and retrieval date. Figures
are dense: where a datasheet quotes Tensor Core throughput with 2:4 structured sparsity, the
table holds half of it, since training never runs sparse.
"""

from __future__ import annotations

import csv
import functools
import io
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Literal

DATA_FILE = "peak_flops.csv"
PRECISIONS = ("bf16", "fp16", "tf32", "fp32")
Unit = Literal["gpu", "tpu_chip", "tpu_core"]


class PeakTableError(RuntimeError):
    """The peak table is malformed: an editing mistake, never a user's."""


@dataclass(frozen=True)
class PeakFlops:
    accelerator: str
    unit: Unit                       # what one device is: a GPU, a TPU chip, a TPU core
    tflops: MappingProxyType[str, float]  # precision -> dense TFLOP/s of one device
    note: str
    source: str                      # the datasheet the figures come from
    retrieved: str


@dataclass(frozen=True)
class Peak:
    """The peak a run is measured against, and why that one."""

    flops: float                     # FLOP/s of one device
    precision: str                   # the column used (may differ from the run's: see note)
    note: str
    source: str
    retrieved: str


def _row(raw: dict[str, str]) -> PeakFlops:
    tflops: dict[str, float] = {}
    for precision in PRECISIONS:
        text = (raw.get(f"{precision}_tflops") or "").strip()
        if not text:
            continue
        try:
            value = float(text)
        except ValueError as exc:
            raise PeakTableError(f"{raw['accelerator']}: {precision}_tflops {text!r}") from exc
        if not value > 0:
            raise PeakTableError(f"{raw['accelerator']}: {precision}_tflops must be positive")
        tflops[precision] = value
    if not tflops or not raw.get("source") or not raw.get("retrieved"):
        raise PeakTableError(f"{raw.get('accelerator')}: a figure, a source and a date each")
    if raw["unit"] not in ("gpu", "tpu_chip", "tpu_core"):
        raise PeakTableError(f"{raw['accelerator']}: unknown unit {raw['unit']!r}")
    return PeakFlops(raw["accelerator"], raw["unit"], MappingProxyType(tflops),  # type: ignore[arg-type]
                     raw.get("note", ""), raw["source"], raw["retrieved"])


@functools.cache
def peak_table() -> MappingProxyType[str, PeakFlops]:
    text = resources.files("vertexplan.perf").joinpath("data", DATA_FILE).read_text("utf-8")
    rows = [_row(raw) for raw in csv.DictReader(io.StringIO(text))]
    table = {row.accelerator: row for row in rows}
    if len(table) != len(rows):
        raise PeakTableError("an accelerator appears twice")
    return MappingProxyType(table)


def peak_flops(accelerator: str, precision: str) -> Peak | str:
    """One device's peak for a run in `precision`, or why there is none (a sentence)."""
    row = peak_table().get(accelerator)
    if row is None:
        return f"no peak FLOP/s known for {accelerator}"
    if precision not in PRECISIONS:
        return f"unknown precision {precision!r}; known: {', '.join(PRECISIONS)}"
    figure = row.tflops.get(precision)
    used, note = precision, row.note
    if figure is None and precision == "fp32" and row.unit != "gpu":
        # XLA runs a TPU's fp32 matrix products as bf16 passes on the MXU by default.
        figure, used = row.tflops.get("bf16"), "bf16"
        note = "fp32 matrix products run on the MXU in bf16 by default; " + note
    if figure is None:
        return f"{accelerator} has no {precision} peak (no fast {precision} arithmetic)"
    return Peak(figure * 1e12, used, note.strip("; "), row.source, row.retrieved)
