"""Reading a composed launch back into request fields (import of an exported job).

The inverse of ``parallelism.launch``: the built-in trainers' generated arguments and the
generated environment variables become the request fields that wrote them. Callers keep a
reading only when composing it again gives back the same launch.
"""

from __future__ import annotations

import json
from typing import Any

from vertexplan.composer.deepspeed_config import from_deepspeed_json
from vertexplan.composer.parallelism import (
    CHECKPOINTING_FLAG,
    DEEPSPEED_ENV,
    FSDP_ENV,
    NPROC_FLAG,
    PARALLEL_OPTIONS,
    PARALLELISM_ENV,
    STRATEGIES,
)
from vertexplan.digits import ascii_int

_SET_FLAGS = ("fsdp.shard_size", "micro_batch_size", "precision", "grad_clip",
              "offload_optimizer", "offload_params")


def parse_builtin_args(args: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    """(request fields, the user's arguments) from the built-in trainer's generated arguments.

    None when ``args`` do not start with ``--strategy NAME``. The caller re-composes the request
    and keeps the reading only when it gives back the same arguments.
    """
    if len(args) < 2 or args[0] != "--strategy" or args[1] not in STRATEGIES:
        return None
    request: dict[str, Any] = {"strategy": args[1]}
    rest = args[2:]
    if rest[:1] == [NPROC_FLAG] and len(rest) >= 2:
        rest = rest[2:]  # derived from the machine: composing again writes it back
    # The order ``launch`` writes them in.
    expected = ["--fsdp-mode", "--set:fsdp.shard_size", "--batch-size",
                *(f"--set:{name}" for name in _SET_FLAGS[1:3]), CHECKPOINTING_FLAG,
                *(f"--set:{name}" for name in _SET_FLAGS[3:])]
    position = 0
    while len(rest) >= 2:
        flag, value = rest[0], rest[1]
        key = flag
        if flag == "--set":
            key = f"--set:{value.partition('=')[0]}"
            value = value.partition("=")[2]
        if key not in expected[position:]:
            break
        position = expected.index(key) + 1
        if not _apply_flag(request, key, value):
            break
        rest = rest[2:]
    return request, rest


def parse_jax_args(args: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    """(request fields, the user's arguments) from the JAX trainer's generated arguments
    (``--mesh D,F,T`` then ``--batch-size N``, ``--precision P`` and
    ``--activation-checkpointing MODE`` when written); None when
    ``args`` do not start with a mesh. As with ``parse_builtin_args``, the caller keeps the
    reading only when composing it gives back the same arguments (a mesh the request's fields
    cannot express, such as data and fsdp both above 1, does not)."""
    if len(args) < 2 or args[0] != "--mesh":
        return None
    degrees = args[1].split(",")
    numbers = [ascii_int(d) for d in degrees]
    if len(numbers) != 3 or not all(numbers):
        return None
    data, fsdp, tensor = numbers
    request: dict[str, Any] = {"strategy": "tpu_jax"}
    if fsdp > 1 and data == 1:
        request["tpu"] = {"sharding": "fsdp"}
    if tensor > 1:
        request["parallelism"] = {"tensor": tensor}
    rest = args[2:]
    if rest[:1] == ["--batch-size"] and len(rest) >= 2 and ascii_int(rest[1]) is not None:
        request["batch"] = {"global_batch_size": ascii_int(rest[1])}
        rest = rest[2:]
    if rest[:1] == ["--precision"] and len(rest) >= 2:
        request["precision"] = rest[1]
        rest = rest[2:]
    if rest[:1] == [CHECKPOINTING_FLAG] and len(rest) >= 2:
        request["model"] = {"activation_checkpointing": rest[1]}
        rest = rest[2:]
    return request, rest


def _apply_flag(request: dict[str, Any], key: str, value: str) -> bool:
    try:
        if key == CHECKPOINTING_FLAG:
            request["model"] = {"activation_checkpointing": value}
        elif key == "--fsdp-mode":
            request.setdefault("fsdp", {})["mode"] = value
        elif key == "--set:fsdp.shard_size":
            request.setdefault("fsdp", {})["shard_size"] = int(value)
        elif key == "--batch-size":
            request.setdefault("batch", {})["global_batch_size"] = int(value)
        elif key == "--set:micro_batch_size":
            request.setdefault("batch", {})["micro_batch_size"] = int(value)
        elif key == "--set:precision":
            request["precision"] = value
        elif key == "--set:grad_clip":
            request.setdefault("deepspeed", {})["gradient_clipping"] = float(value)
        elif key in ("--set:offload_optimizer", "--set:offload_params"):
            request.setdefault("deepspeed", {})[key.partition(":")[2]] = value == "true"
    except ValueError:
        return False
    return True


def parse_env(env: dict[str, str]) -> dict[str, Any]:
    """Request fields read back from the generated environment variables."""
    request: dict[str, Any] = {}
    raw = env.get(DEEPSPEED_ENV)
    if raw is not None:
        try:
            ds = json.loads(raw)
        except ValueError:
            ds = None
        if isinstance(ds, dict):
            stage, section, batch, precision = from_deepspeed_json(ds)
            if stage in (1, 2, 3):
                request["strategy"] = f"zero{stage}"
                request["deepspeed"] = section
                if batch:
                    request["batch"] = batch
                if precision:
                    request["precision"] = precision
    raw = env.get(FSDP_ENV)
    if raw is not None and "strategy" not in request:
        try:
            fsdp = json.loads(raw)
        except ValueError:
            fsdp = None
        if isinstance(fsdp, dict):
            request["strategy"] = "fsdp"
            request["fsdp"] = fsdp
    raw = env.get(PARALLELISM_ENV)
    if raw is not None:
        try:
            degrees = json.loads(raw)
        except ValueError:
            degrees = None
        if isinstance(degrees, dict):
            request["parallelism"] = {"tensor": degrees.get("tp", 1),
                                      "pipeline": degrees.get("pp", 1)}
            for name, key in PARALLEL_OPTIONS.items():
                if key in degrees:
                    request["parallelism"][name] = degrees[key]
    return request
