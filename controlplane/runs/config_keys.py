"""A job's configuration as flat keys: what the job list filters by (?config=lr<=0.001) and the
runs Compare page lays side by side.

`flatten` turns a job's stored request into one level of dotted keys ("strategy",
"batch.micro_batch_size", "chief.machine_type") plus the values its trainer arguments set
("--lr 0.001", "--lr=0.001" -> "lr": 0.001; a bare "--compile" -> true), numbers as numbers.
A job keeps the result in Job.config when it is created, so the list filters with one JSON
key lookup: the dotted key is a literal key there, never a path a user string could walk.
Environment variables are left out: they may hold credentials and are nobody's hyperparameter.

The filter's grammar is small on purpose: KEY OP VALUE, a key of letters, digits, '_' and '.',
an operator of = != < <= > >=; <, <=, > and >= compare numbers (and need a number); = and !=
match a number numerically ("1e-3" finds 0.001) and anything else as text. Anything else is
refused with the grammar, and the list is not filtered.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from django.db.models import Case, F, FloatField, Func, Q, QuerySet, TextField, When
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast

Scalar = str | int | float | bool | None

# Left out of the flat configuration: the job's name (every table shows it), its environment
# (may hold secrets) and the raw argument list (read into its own keys instead).
SKIPPED = frozenset({"name", "env", "args"})
MAX_KEY = 100
MAX_VALUE = 200
KEY = re.compile(r"[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*")
FILTER = re.compile(rf"\s*(?P<key>{KEY.pattern})\s*(?P<op><=|>=|!=|=|<|>)\s*(?P<value>.*?)\s*")
GRAMMAR = ("write KEY OP VALUE: a key of letters, digits, '_' and '.' (e.g. lr, "
           "batch.micro_batch_size), an operator of = != < <= > >= (<, <=, >, >= need a "
           "number)")
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
FLAG = re.compile(r"--([A-Za-z][A-Za-z0-9_-]*)(?:=(.*))?", re.S)


class ConfigFilterError(ValueError):
    """A refused `config` filter; the message names the problem and the grammar."""

    field = "config"


def _scalar(text: str) -> Scalar:
    """A trainer argument's value: a number where it reads as one, else the text."""
    if NUMBER.fullmatch(text.strip()):
        number = float(text)
        if math.isfinite(number):
            return int(number) if re.fullmatch(r"[+-]?\d+", text.strip()) else number
    return text


def _walk(value: Any, prefix: str) -> Iterator[tuple[str, Scalar]]:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            yield from _walk(inner, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list):
        # A list is one cell: its JSON, as compact as it reads.
        yield prefix, json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
    elif value is None or isinstance(value, str | int | float | bool):
        yield prefix, value
    else:
        yield prefix, str(value)


def from_args(args: Any) -> dict[str, Scalar]:
    """`--name value`, `--name=value` and bare `--flag` arguments as name -> value (dashes in
    a name read as underscores, as argparse stores them); anything else is skipped."""
    values: dict[str, Scalar] = {}
    if not isinstance(args, list):
        return values
    words = [str(word) for word in args]
    for i, word in enumerate(words):
        matched = FLAG.fullmatch(word)
        if matched is None:
            continue
        name = matched[1].replace("-", "_")
        if matched[2] is not None:
            values[name] = _scalar(matched[2])
        elif i + 1 < len(words) and not words[i + 1].startswith("--"):
            values[name] = _scalar(words[i + 1])
        else:
            values[name] = True
    return values


def flatten(request: Mapping[str, Any] | None) -> dict[str, Scalar]:
    """The request's keys, dotted, then its trainer arguments' (a request key wins a clash)."""
    flat: dict[str, Scalar] = {}
    for key, value in (request or {}).items():
        if key not in SKIPPED:
            flat.update(_walk(value, str(key)))
    for key, value in from_args((request or {}).get("args")).items():
        flat.setdefault(key, value)
    return dict(sorted(flat.items()))


def parse_filter(raw: str) -> tuple[str, str, str]:
    """'KEY OP VALUE' -> (key, op, value); ConfigFilterError naming what is wrong."""
    shown = repr(raw if len(raw) <= 60 else raw[:60] + "...")
    matched = FILTER.fullmatch(raw)
    if matched is None:
        raise ConfigFilterError(f"{shown}: {GRAMMAR}")
    key, op, value = matched["key"], matched["op"], matched["value"]
    if len(key) > MAX_KEY or len(value) > MAX_VALUE:
        raise ConfigFilterError(f"{shown}: a key is at most {MAX_KEY} characters, a value "
                                f"at most {MAX_VALUE} ({GRAMMAR})")
    if op in ("<", "<=", ">", ">=") and not NUMBER.fullmatch(value):
        raise ConfigFilterError(f"{shown}: {op} compares numbers; {value!r} is not one "
                                f"({GRAMMAR})")
    return key, op, value


class ConfigType(Func):
    """The JSON type of one key of Job.config: PostgreSQL's jsonb_typeof ('number', 'string',
    ...), SQLite's json_type (the demo's database: 'integer' or 'real' for a number). The key
    is a parameter, never SQL text."""

    output_field = TextField()

    def __init__(self, key: str) -> None:
        self.key = key
        super().__init__(F("config"))

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        column, params = compiler.compile(self.source_expressions[0])
        return f"jsonb_typeof({column} -> %s)", (*params, self.key)

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        column, params = compiler.compile(self.source_expressions[0])
        # The key's characters are letters, digits, '_' and '.' (the grammar): quoted, one key.
        return f"json_type({column}, %s)", (*params, f'$."{self.key}"')


NUMBER_TYPES = ("number", "integer", "real")


def filter_config(jobs: QuerySet[Any], raw: str) -> QuerySet[Any]:
    """The jobs whose configuration key satisfies the filter (ConfigFilterError when the
    filter breaks the grammar). The key and value travel as query parameters."""
    key, op, value = parse_filter(raw)
    # A number is read from the JSON only where the JSON holds a number: CASE keeps the cast
    # away from text, which PostgreSQL would refuse to cast.
    jobs = jobs.annotate(
        config_type=ConfigType(key),
        # As plain text: a JSON key's own lookups would read the value given as JSON.
        config_text=Cast(KeyTextTransform(key, "config"), TextField()),
    ).annotate(config_number=Case(
        When(config_type__in=NUMBER_TYPES, then=Cast(F("config_text"), FloatField())),
        default=None, output_field=FloatField()))
    if NUMBER.fullmatch(value):
        number = float(value)
        # "IS NOT NULL" first: a NULL number would make the whole test NULL, and `!=` would
        # then drop the very jobs whose value is text.
        equal = Q(config_number__isnull=False, config_number=number) | Q(config_text=value)
        compared = {"<": Q(config_number__lt=number), "<=": Q(config_number__lte=number),
                    ">": Q(config_number__gt=number), ">=": Q(config_number__gte=number)}
    else:
        equal, compared = Q(config_text=value), {}
    if op == "=":
        return jobs.filter(equal)
    if op == "!=":
        return jobs.filter(config_text__isnull=False).exclude(equal)
    return jobs.filter(compared[op])


# --- the Compare page's table -----------------------------------------------------------------

MISSING = "\u2013"  # (an en dash) a key one run has and another has not


def shown(value: Scalar) -> str:
    """A value as its cell reads: text as it is, anything else as JSON writes it."""
    return value if isinstance(value, str) else json.dumps(value)


def compare_rows(configs: list[Mapping[str, Scalar]]) -> list[dict[str, Any]]:
    """One row per key any of the runs has: its cells (in the runs' order) and whether they
    differ (a key that only some runs have differs)."""
    keys = sorted({key for config in configs for key in config})
    rows = []
    for key in keys:
        cells = [shown(config[key]) if key in config else MISSING for config in configs]
        rows.append({"key": key, "cells": cells, "differs": len(set(cells)) > 1})
    return rows


def of_job(job: Any) -> Mapping[str, Scalar]:
    """A job's flat configuration (read from its request where the job has none stored)."""
    return job.config or flatten(job.request)
