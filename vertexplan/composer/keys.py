"""Every key of a job request checked against the fields the composer reads.

A key the composer does not read would be dropped: ``useSpot: true`` in the form's advanced
JSON would give an on-demand job that validates. So the composer itself refuses an unknown key
at every level, on its own path and with the nearest valid name, whichever way the request came
(API, form, import, template, preset). ``SCHEMA`` is the request's shape: a dict of the keys a
section has, ``FREE`` for a map of the user's own keys (labels, env, DeepSpeed extras), ``None``
for a value, and a one-item list for a list of such sections.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from vertexplan.catalog.errors import child, item
from vertexplan.catalog.rules.fields import nearest
from vertexplan.composer.deepspeed_config import ZERO_FLAGS, ZERO_INTS
from vertexplan.composer.request import (
    PASSTHROUGH_JOB_SPEC,
    PERSISTENT_DISK_WORDS,
    POOL_KEYS,
    POOL_ROLES,
)

FREE = "free"
Shape = dict[str, Any] | list[Any] | str | None

_NFS = {"server": None, "path": None, "mount_point": None}
_POOL: dict[str, Shape] = {key: None for key in POOL_KEYS}
_POOL["reservation"] = {"type": None, "key": None, "values": None}
_POOL["nfs_mounts"] = [_NFS]
_POOL["env"] = FREE
_DEEPSPEED: dict[str, Shape] = {
    "offload_optimizer": None, "offload_params": None, "gradient_clipping": None,
    # The optimizer's keys beside its type are its params, passed to DeepSpeed as given; fp16
    # and extra are DeepSpeed's own keys, passed through too.
    "optimizer": FREE, "fp16": FREE, "extra": FREE,
    "scheduler": {key: None for key in ("type", "warmup_min_lr", "warmup_max_lr",
                                        "warmup_num_steps", "total_num_steps")},
    "zero": {key: None for key in (*ZERO_INTS, *ZERO_FLAGS)},
}
SCHEMA: dict[str, Shape] = {
    **{key: None for key in (
        "name", "region", "strategy", "precision", "scheduling_strategy", "spot", "image_uri",
        "image_entrypoint", "command", "args", "restart_job_on_worker_restart",
        "disable_retries", "timeout_hours", "max_wait_hours", "base_output_directory",
        "network", "reserved_ip_ranges", "psc_network_attachment", "enable_web_access",
        "enable_dashboard_access", "service_account", "tensorboard", "experiment",
        "experiment_run",
        # Not Vertex's (it has none): the control plane's queue in front of it orders jobs by
        # it (low, normal, high; at most the team's cap), and the composer leaves it out.
        "priority",
        # Not Vertex's either: which team framework's lines the control plane reads (what
        # detection from the command or the first lines would tell), left out by the composer.
        "framework")},
    **{role: _POOL for role in POOL_ROLES},
    "env": FREE, "labels": FREE,
    # Judged by Vertex's rules as the CustomJob's encryptionSpec (unknown names included).
    "encryption_spec": FREE,
    "nfs_mounts": [_NFS],
    "python_package": {"executor_image_uri": None, "package_uris": None, "python_module": None},
    "batch": {"global_batch_size": None, "micro_batch_size": None,
              "gradient_accumulation_steps": None},
    "fsdp": {"mode": None, "shard_size": None},
    "deepspeed": _DEEPSPEED,
    "parallelism": {key: None for key in ("tensor", "pipeline", "data", "pipeline_schedule",
                                          "virtual_stages", "sequence_parallel")},
    "tpu": {"sharding": None},
    "model": {key: None for key in (
        "parameters", "trainable_parameters", "largest_layer_parameters", "hidden_size",
        "layers", "sequence_length", "attention_heads", "vocab_size", "intermediate_size",
        "kv_heads", "activation_checkpointing")},
    "recovery": {key: None for key in ("strategy", "max_recoveries", "retries_in_place",
                                       "fallback", "regions", "tries_per_step",
                                       "tries_per_region", "backoff_s", "backoff_cap_s")},
    "job_spec_extra": {key: None for key in PASSTHROUGH_JOB_SPEC},
}

# Names people write for what the request spells otherwise: said outright, not guessed.
_SPOT = ("scheduling_strategy", "spot VMs are asked for with scheduling_strategy: SPOT "
         "(for the whole job)")
MEANT: dict[str, tuple[str, str]] = {
    "useSpot": _SPOT, "use_spot": _SPOT, "preemptible": _SPOT, "spot_vms": _SPOT,
    "gpuCount": ("accelerator_count", "the number of GPUs is accelerator_count"),
    "gpu_count": ("accelerator_count", "the number of GPUs is accelerator_count"),
    "gpuType": ("accelerator_type", "the GPU model is accelerator_type"),
    "gpu_type": ("accelerator_type", "the GPU model is accelerator_type"),
    "stage": ("strategy", "the ZeRO stage is the strategy: zero1, zero2 or zero3"),
    "working_dir": ("command", "Vertex has no working directory field: set WORKDIR in the "
                    "image or cd in the command"),
}
# The same, where the name means something else elsewhere: (section, key).
MEANT_IN: dict[tuple[str, str], tuple[str, str]] = {
    ("reservation", "name"): ("values", "a reservation is named by key "
                              "compute.googleapis.com/reservation-name and values: [its name]"),
    ("reservation", "reservationAffinityType"): ("type", "the affinity type is type"),
}
# CustomJobSpec fields that have a request field of their own: job_spec_extra does not carry
# them (the request's field would silently win or lose).
_OWN_FIELD = {
    "serviceAccount": "service_account", "network": "network",
    "reservedIpRanges": "reserved_ip_ranges", "enableWebAccess": "enable_web_access",
    "enableDashboardAccess": "enable_dashboard_access",
    "baseOutputDirectory": "base_output_directory",
    "pscInterfaceConfig": "psc_network_attachment",
    "scheduling": "scheduling_strategy, timeout_hours, max_wait_hours, disable_retries and "
                  "restart_job_on_worker_restart",
    "workerPoolSpecs": "chief, workers, reduction_server, parameter_servers and evaluators",
}


def _fold(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


def _message(key: str, where: str, names: list[str], section: str) -> tuple[str, str]:
    """(the message, the name meant) for an unknown ``key``."""
    what = f"{section} has no field {key!r}" if section else f"no request field {key!r}"
    if section == "job_spec_extra" and key in _OWN_FIELD:
        own = _OWN_FIELD[key]
        best = own.split(",")[0]
        return (f"job_spec_extra.{key} is not passed through: the request has {own} for "
                f"it; did you mean {best}?", best)
    meant = MEANT_IN.get((section.rsplit(".", 1)[-1], key)) or MEANT.get(key)
    if meant:
        name, why = meant
        if name not in names and name in _POOL and name not in SCHEMA:
            name = f"chief.{name}"  # a pool's field, asked for at the top
        return f"{what} (it would be ignored): {why}; did you mean {name}?", name
    folded = {_fold(n): n for n in names}
    best = folded.get(_fold(key)) or nearest(key, names)
    if section == "job_spec_extra":
        return (f"job_spec_extra.{key} is not a CustomJobSpec field the composer passes "
                f"through (it would be dropped); did you mean {best}? It passes: "
                f"{', '.join(names)}", best)
    return (f"{what} (it would be ignored); did you mean {best}? "
            f"Valid: {', '.join(names)}", best)


def _walk(shape: Shape, value: Any, path: str, section: str
          ) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    if isinstance(shape, list) and isinstance(value, list):
        for i, entry in enumerate(value):
            yield from _walk(shape[0], entry, item(path, i), section)
        return
    if not isinstance(shape, dict) or not isinstance(value, dict):
        return
    names = sorted(shape)
    for key, sub in value.items():
        if not isinstance(key, str):
            yield (path, f"{path or 'the request'} has a key {key!r} that is not a string", ())
            continue
        where = child(path, key)
        if key not in shape:
            # Persistent disks have their own answer (checks.py), on the same path.
            if key in PERSISTENT_DISK_WORDS and (not path or path in POOL_ROLES):
                continue
            message, best = _message(key, where, names, section)
            yield (where, message, (best,))
            continue
        yield from _walk(shape[key], sub, where, child(section, key) if section else key)


def unknown(document: Mapping[str, Any]) -> Iterator[tuple[str, str, tuple[str, ...]]]:
    """(path, message, suggestions) for every key of a request written as a dict (a
    JobRequest's ``document``) that the composer does not read."""
    yield from _walk(SCHEMA, document, "", "")
