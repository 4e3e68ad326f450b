"""The strategy, command, arguments and environment of an imported chief, read back.

A reading is kept only when composing it gives the very same container; otherwise the command,
arguments and environment are kept verbatim.
"""

from __future__ import annotations

from typing import Any

from vertexplan.catalog.lookups import is_tpu
from vertexplan.composer.compose import compose
from vertexplan.composer.launch_readback import parse_builtin_args, parse_env, parse_jax_args
from vertexplan.composer.parallelism import (
    GENERATED_ENV,
    JAX_TRAINER_COMMAND,
    PJRT_ENV,
    TRAINER_COMMAND,
)
from vertexplan.composer.request import JobRequest
from vertexplan.interop.fields import env_dict, pool_task

_STRATEGY_KEYS = ("strategy", "batch", "deepspeed", "fsdp", "parallelism", "precision")


def read_launch(request: dict[str, Any], container: dict[str, Any]) -> list[tuple[str, str]]:
    """Fill strategy, command, args and env: the first reading that composes back exactly.

    Returns what was wrong with the strategy's own configuration when it could not be read
    as one (request key, message)."""
    request["image_uri"] = container["imageUri"]
    candidates = _candidates(request, container)
    problems: list[tuple[str, str]] = []
    for candidate in candidates:
        trial = {**request, **{k: v for k, v in candidate.items() if v not in (None, {})}}
        composed = compose(JobRequest.from_dict(trial))
        pool0 = composed.custom_job["jobSpec"]["workerPoolSpecs"][0]
        if pool_task(pool0) == container:
            request.clear()
            request.update(trial)
            return problems
        if not problems and candidate is not candidates[-1]:
            # The generated configuration reads as a strategy that does not fit this job (a
            # DeepSpeed batch for another world size): what is wrong with it is worth saying
            # even though the job is kept verbatim.
            problems = [(key, message) for key, messages in composed.errors.items()
                        if key.split(".", 1)[0] in _STRATEGY_KEYS for message in messages]
    request.update({k: v for k, v in candidates[-1].items() if v not in (None, {})})
    return problems


def _candidates(request: dict[str, Any], container: dict[str, Any]) -> list[dict[str, Any]]:
    """The readings to try, most structured first; the last keeps everything verbatim."""
    env = env_dict(container["env"])
    chief = request.get("chief") or {}
    machine = chief.get("machine_type")
    tpu = isinstance(machine, str) and is_tpu(machine)
    candidates: list[dict[str, Any]] = []
    if env is None:
        candidates.append({"strategy": "tpu_jax" if tpu else "ddp", "env": container["env"],
                           **_verbatim(container)})
        return candidates
    structured = parse_env(env)
    rest_env = {k: v for k, v in env.items() if k not in GENERATED_ENV}
    if tpu:
        structured["strategy"] = "tpu_xla" if env.get(PJRT_ENV) == "TPU" \
            else "tpu_jax"
        if structured["strategy"] == "tpu_jax" and PJRT_ENV in env:
            rest_env[PJRT_ENV] = env[PJRT_ENV]
    parsed = None
    if container["command"] == TRAINER_COMMAND:
        parsed = parse_builtin_args(container["args"])
    elif container["command"] == JAX_TRAINER_COMMAND and tpu:
        parsed = parse_jax_args(container["args"])
    if parsed is not None:
        arg_fields, user_args = parsed
        merged = {**structured, **_merge(structured, arg_fields)}
        candidates.append({**merged, "env": rest_env, "args": user_args})
    candidates.append({**structured, "env": rest_env, **_verbatim(container)})
    candidates.append({"strategy": "tpu_jax" if tpu else "ddp", "env": env,
                       **_verbatim(container)})
    return candidates


def _merge(env_fields: dict[str, Any], arg_fields: dict[str, Any]) -> dict[str, Any]:
    """The built-in trainer's flags, merged into what the environment said."""
    out = dict(arg_fields)
    for section in ("deepspeed", "batch", "fsdp"):
        if section in env_fields and section in arg_fields:
            out[section] = {**arg_fields[section], **env_fields[section]}
    return out


def _verbatim(container: dict[str, Any]) -> dict[str, Any]:
    if not container["command"]:
        return {"image_entrypoint": True, "args": container["args"]}
    return {"command": container["command"], "args": container["args"]}
