"""Reading the free-text columns of the price table: ``name`` and ``retrieved``.

The ``name`` column is a key followed by an optional note in parentheses, written for people:

    n1-standard-8                                   a machine type
    NVIDIA_TESLA_T4                                 an AcceleratorType
    TPU_V5_LITEPOD (v5e; ct5lp-hightpu-1t/4t/8t)    a TPU chip price and the machines it covers
    local-ssd (bundled with A2-ultra/A3)            a disk type and a note
    NVIDIA_H100_80GB (per GPU)                      a management fee per GPU of that type
    A3 Instance Core (per vCPU)                     a management fee per vCPU of a machine family
    N1 RAM (per GB; unit = GB-hour)                 a management fee per GB of memory

These functions turn that text into typed values; the loader refuses rows they cannot read, so
a badly edited name fails when the table loads rather than when a job is priced.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

FeeBasis = Literal["gpu", "vcpu", "gb"]

_NAME = re.compile(r"\s*(?P<key>[^()]+?)\s*(?:\((?P<detail>[^()]*)\))?\s*")
# "ct5lp-hightpu-1t/4t/8t": a machine series and its sizes, the first written in full.
_MACHINES = re.compile(r"(?P<series>[a-z0-9]+(?:-[a-z0-9]+)*)-(?P<sizes>\w+(?:/\w+)*)")
_FEE_BASIS: dict[str, FeeBasis] = {"per gpu": "gpu", "per vcpu": "vcpu", "per gb": "gb"}
# ISO dates, possibly only a year-month or a year, as the retrieved column writes them.
_DATE = re.compile(r"(?<![\w@.-])(20\d\d)(?:-(0[1-9]|1[0-2])(?:-(0[1-9]|[12]\d|3[01]))?)?(?![\w-])")


def split_name(name: str) -> tuple[str, str]:
    """('TPU_V5_LITEPOD', 'v5e; ct5lp-hightpu-1t/4t/8t') from the name column."""
    match = _NAME.fullmatch(name)
    if not match:
        raise ValueError(f"cannot read price name {name!r}: expected 'KEY' or 'KEY (note)'")
    return match["key"], (match["detail"] or "").strip()


@dataclass(frozen=True)
class TpuName:
    """What a tpu row prices: one chip of this TPU on any of ``machine_types``."""

    key: str  # the table's key, e.g. TPU_V5_LITEPOD, TPU_V6E
    generation: str  # v5e, v5p, Trillium
    machine_types: tuple[str, ...]


def parse_tpu_name(name: str) -> TpuName:
    """'TPU_V5_LITEPOD (v5e; ct5lp-hightpu-1t/4t/8t)' -> the key, generation and machines."""
    key, detail = split_name(name)
    parts = [p.strip() for p in detail.split(";")]
    if len(parts) != 2:
        raise ValueError(f"tpu price {name!r}: expected 'KEY (generation; machine types)'")
    generation, machines = parts
    match = _MACHINES.fullmatch(machines)
    if not match:
        raise ValueError(f"tpu price {name!r}: cannot read machine types {machines!r}")
    series = match["series"]
    sizes = match["sizes"].split("/")
    return TpuName(key, generation, tuple(f"{series}-{size}" for size in sizes))


@dataclass(frozen=True)
class FeeName:
    """A management fee: per GPU of an accelerator type, or per vCPU / GB of a machine family."""

    key: str  # the table's key, e.g. NVIDIA_H100_80GB, A3 Instance Core
    basis: FeeBasis
    subject: str  # the AcceleratorType for "gpu"; the machine family (a3, n1) otherwise


def parse_fee_name(name: str) -> FeeName:
    """'N1 RAM (per GB; unit = GB-hour)' -> FeeName('N1 RAM', 'gb', 'n1')."""
    key, detail = split_name(name)
    basis = _FEE_BASIS.get(detail.split(";")[0].strip().lower())
    if basis is None:
        raise ValueError(f"management fee {name!r}: expected (per GPU), (per vCPU) or (per GB)")
    subject = key if basis == "gpu" else key.split()[0].lower()
    return FeeName(key, basis, subject)


def retrieved_dates(text: str) -> tuple[str, ...]:
    """The dates in a retrieved cell, as written: '2025-08-16 / 2026-07-30' gives both,
    '2026-09' a month, 'various 2026' a year, 'skypilot@006059e0 (date n/a)' none."""
    return tuple(match.group(0) for match in _DATE.finditer(text))
