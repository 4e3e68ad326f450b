"""The compose form's flat fields <-> a job request, both ways, without Django.

``request_from_fields`` reads the form's values (display strings or parsed values alike), and
``fields_from_request`` gives the values that show a request in the form. What a request holds
that the form has no input for is returned by ``leftovers`` and travels in the form's
"advanced" JSON, so a job imported or cloned into the form loses nothing.
"""

from __future__ import annotations

import shlex
from typing import Any

from vertexplan.composer.request import REDUCTION_SERVER_MACHINE, blank, normalize

NO_ACCELERATOR = "none"
SAME_AS_CHIEF = ""
RESTART_VALUES: dict[str, bool | None] = {"auto": None, "yes": True, "no": False}
# The form's activation checkpointing menu (vertexplan.checkpointing.CHECKPOINTING); none, the
# default, is left out of the request.
CHECKPOINTING_CHOICES = [("none", "None"), ("selective", "Selective (attention recomputed)"),
                         ("full", "Full (each block recomputed)")]
RESTART_NAMES = {value: name for name, value in RESTART_VALUES.items()}
POOL_INPUTS = ("machine_type", "accelerator_type", "accelerator_count", "tpu_topology",
               "boot_disk_type", "boot_disk_size_gb")
OPTIONAL_POOLS = ("workers", "reduction_server", "parameter_servers", "evaluators")
# request path -> form field, for the settings that are not pool fields
SETTINGS = {
    "fsdp.mode": "fsdp_mode",
    "fsdp.shard_size": "fsdp_shard_size",
    "deepspeed.offload_optimizer": "ds_offload_optimizer",
    "deepspeed.offload_params": "ds_offload_params",
    "deepspeed.gradient_clipping": "ds_gradient_clipping",
    "deepspeed.optimizer.type": "ds_optimizer",
    "deepspeed.optimizer.lr": "ds_lr",
    "deepspeed.optimizer.weight_decay": "ds_weight_decay",
    "deepspeed.scheduler.type": "ds_scheduler",
    "deepspeed.scheduler.warmup_num_steps": "ds_warmup_steps",
    "deepspeed.scheduler.total_num_steps": "ds_total_steps",
    "deepspeed.zero.overlap_comm": "ds_overlap_comm",
    "deepspeed.zero.reduce_scatter": "ds_reduce_scatter",
    "deepspeed.zero.contiguous_gradients": "ds_contiguous_gradients",
    "deepspeed.zero.allgather_bucket_size": "ds_allgather_bucket_size",
    "deepspeed.zero.reduce_bucket_size": "ds_reduce_bucket_size",
    "batch.global_batch_size": "batch_global",
    "batch.micro_batch_size": "batch_micro",
    "batch.gradient_accumulation_steps": "batch_accumulation",
    "parallelism.tensor": "parallel_tensor",
    "parallelism.pipeline": "parallel_pipeline",
    "parallelism.data": "parallel_tensor",
    "parallelism.pipeline_schedule": "parallel_schedule",
    "parallelism.virtual_stages": "parallel_virtual_stages",
    "parallelism.sequence_parallel": "parallel_sequence",
    "tpu.sharding": "tpu_sharding",
    "model.parameters": "model_parameters_b",
    "model.trainable_parameters": "model_trainable_b",
    "model.hidden_size": "model_hidden_size",
    "model.layers": "model_layers",
    "model.sequence_length": "model_sequence_length",
    "model.activation_checkpointing": "model_activation_checkpointing",
    "python_package.executor_image_uri": "pkg_executor_image_uri",
    "python_package.package_uris": "pkg_package_uris",
    "python_package.python_module": "pkg_python_module",
}
# Settings whose input is a list, one item a line (or comma-separated).
LIST_SETTINGS = ("pkg_package_uris",)
SIMPLE = ("name", "strategy", "precision", "image_uri", "scheduling_strategy", "timeout_hours",
          "max_wait_hours", "disable_retries", "base_output_directory", "network",
          "psc_network_attachment", "enable_web_access", "service_account", "image_entrypoint",
          "tensorboard", "experiment", "experiment_run")
TEXT_LISTS = ("command", "args")
BILLION = 1_000_000_000


# -- parsing the text inputs ----------------------------------------------------------------

def split_args(value: Any) -> list[str]:
    if isinstance(value, list):
        return [str(v) for v in value]
    return shlex.split(value or "")


def parse_pairs(value: Any, what: str) -> dict[str, str]:
    """'NAME=value' lines (or a dict) -> a dict; ValueError names the bad line."""
    if isinstance(value, dict):
        return dict(value)
    out: dict[str, str] = {}
    for number, line in enumerate((value or "").splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        key, sep, text = line.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"line {number}: write {what} as KEY=value")
        # The value as written (a form's textarea ends lines with \r\n): spaces are part of
        # it, as they are of an environment variable.
        out[key.strip()] = text.removesuffix("\r")
    return out


def show_pairs(value: dict[str, Any] | None) -> str:
    return "\n".join(f"{k}={v}" for k, v in (value or {}).items())


def parse_mounts(value: Any) -> list[dict[str, str]]:
    """'server:/path mount_point' lines -> nfs_mounts."""
    if isinstance(value, list):
        return value
    mounts = []
    for number, line in enumerate((value or "").splitlines(), start=1):
        if not line.strip():
            continue
        words = line.split()
        server, sep, path = words[0].partition(":")
        if len(words) != 2 or not sep:
            raise ValueError(f"line {number}: write an NFS mount as SERVER:/path mount_point, "
                             "e.g. 10.0.0.2:/share data")
        mounts.append({"server": server, "path": path, "mount_point": words[1]})
    return mounts


def show_mounts(value: Any) -> str:
    if not isinstance(value, list):
        return ""
    return "\n".join(f"{m.get('server')}:{m.get('path')} {m.get('mount_point')}"
                     for m in value if isinstance(m, dict))


def parse_list(value: Any) -> list[str]:
    if isinstance(value, list):
        return value
    return [part.strip() for part in (value or "").replace("\n", ",").split(",") if part.strip()]


# -- fields -> request ----------------------------------------------------------------------

def _set(request: dict[str, Any], path: str, value: Any) -> None:
    *parents, leaf = path.split(".")
    node = request
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = value


def _pool(data: dict[str, Any], role: str) -> dict[str, Any]:
    pool: dict[str, Any] = {}
    for name in ("replica_count", *POOL_INPUTS):
        value = data.get(f"{role}_{name}")
        if name == "accelerator_type" and value == NO_ACCELERATOR:
            value = ""
        if not blank(value):
            pool[name] = value
    if role != "workers":
        # Only the workers inherit the chief's machine: elsewhere a blank machine is an error
        # that belongs on this input.
        pool.setdefault("machine_type", "")
    return pool


def request_from_fields(data: dict[str, Any]) -> dict[str, Any]:
    """The job request for the form's values. Raises ValueError for unreadable text inputs."""
    strategy = data.get("strategy") or "ddp"
    accelerator = data.get("chief_accelerator_type") or NO_ACCELERATOR
    request: dict[str, Any] = {
        "name": data.get("name") or "",
        "strategy": strategy,
        "args": split_args(data.get("args")),
        "chief": {
            "machine_type": data.get("chief_machine_type") or "",
            "accelerator_type": "" if accelerator == NO_ACCELERATOR else accelerator,
            "accelerator_count": data.get("chief_accelerator_count") or 0,
            "boot_disk_type": data.get("chief_boot_disk_type") or "",
            "boot_disk_size_gb": data.get("chief_boot_disk_size_gb"),
        },
        "workers": _pool(data, "workers") if data.get("workers_enabled") else None,
        "restart_job_on_worker_restart":
            RESTART_VALUES.get(data.get("restart_job_on_worker_restart") or "auto"),
    }
    if data.get("chief_tpu_topology"):
        request["chief"]["tpu_topology"] = data["chief_tpu_topology"]
    pool2 = data.get("pool2") or ""
    if pool2 == "reduction_server":
        rs = _pool(data, "reduction_server")
        rs["machine_type"] = rs.get("machine_type") or REDUCTION_SERVER_MACHINE
        request["reduction_server"] = rs
    elif pool2 == "parameter_servers":
        request["parameter_servers"] = _pool(data, "parameter_servers")
    if data.get("evaluators_enabled"):
        request["evaluators"] = _pool(data, "evaluators")
    for name in SIMPLE:
        value = data.get(name)
        if name in ("name", "strategy"):
            continue
        if not blank(value) and value is not False:
            request[name] = value.strip() if isinstance(value, str) else value
    if not blank(data.get("command")):
        request["command"] = split_args(data["command"])
    if not blank(data.get("env")):
        request["env"] = parse_pairs(data["env"], "an environment variable")
    if not blank(data.get("labels")):
        request["labels"] = parse_pairs(data["labels"], "a label")
    if not blank(data.get("nfs_mounts")):
        request["nfs_mounts"] = parse_mounts(data["nfs_mounts"])
    if not blank(data.get("reserved_ip_ranges")):
        request["reserved_ip_ranges"] = parse_list(data["reserved_ip_ranges"])
    _settings(data, request, strategy)
    return request


def _settings(data: dict[str, Any], request: dict[str, Any], strategy: str) -> None:
    for path, name in SETTINGS.items():
        if path == "parallelism.data":
            continue
        section = path.split(".", 1)[0]
        if section == "deepspeed" and not strategy.startswith("zero"):
            continue
        if section == "fsdp" and strategy != "fsdp":
            continue
        if section == "tpu" and not strategy.startswith("tpu"):
            continue
        value = data.get(name)
        if blank(value) or value is False or (
                name == "model_activation_checkpointing" and value == "none"):
            continue
        if name in ("model_parameters_b", "model_trainable_b"):
            value = round(float(value) * BILLION)
        if name in LIST_SETTINGS:
            value = parse_list(value)
            if not value:
                continue
        if name in ("parallel_tensor", "parallel_pipeline", "parallel_virtual_stages") and \
                value == 1:
            continue
        if name == "ds_optimizer" or name == "ds_scheduler":
            _set(request, path, value)
            continue
        if path.startswith(("deepspeed.optimizer.", "deepspeed.scheduler.")):
            kind = data.get("ds_optimizer" if "optimizer" in path else "ds_scheduler")
            if not kind:
                continue  # the section is off: its numbers are not used
        _set(request, path, value)
    package = request.get("python_package")
    if isinstance(package, dict):
        # Every input of a package the form was given, blank or not: an error about a blank
        # one then lands on that input, not on the package as a whole.
        package.setdefault("executor_image_uri", "")
        package.setdefault("package_uris", [])
        package.setdefault("python_module", "")
    if strategy.startswith("zero") and data.get("ds_optimizer"):
        beta1, beta2 = data.get("ds_beta1"), data.get("ds_beta2")
        if not blank(beta1) or not blank(beta2):
            request["deepspeed"]["optimizer"]["betas"] = [
                0.9 if blank(beta1) else beta1, 0.999 if blank(beta2) else beta2]
        if not blank(data.get("ds_eps")):
            request["deepspeed"]["optimizer"]["eps"] = data["ds_eps"]


# -- request -> fields ----------------------------------------------------------------------

def fields_from_request(request: dict[str, Any]) -> dict[str, Any]:
    """The form values that show ``request`` (text inputs as display strings)."""
    request, _ = normalize(request)
    chief = request.get("chief") if isinstance(request.get("chief"), dict) else {}
    args = request.get("args")
    values: dict[str, Any] = {
        "name": request.get("name") or "",
        "strategy": request.get("strategy") or "ddp",
        "chief_accelerator_type": chief.get("accelerator_type") or NO_ACCELERATOR,
        "restart_job_on_worker_restart":
            RESTART_NAMES.get(request.get("restart_job_on_worker_restart"), "auto"),
        "workers_enabled": isinstance(request.get("workers"), dict),
        "pool2": ("reduction_server" if isinstance(request.get("reduction_server"), dict)
                  else "parameter_servers" if isinstance(request.get("parameter_servers"), dict)
                  else ""),
        "evaluators_enabled": isinstance(request.get("evaluators"), dict),
    }
    if args is not None:
        values["args"] = shlex.join(str(a) for a in args) if isinstance(args, list) else args
    for name in POOL_INPUTS:
        if name != "accelerator_type" and chief.get(name) not in (None, ""):
            values[f"chief_{name}"] = chief[name]
    for role in OPTIONAL_POOLS:
        pool = request.get(role)
        if isinstance(pool, dict):
            for name in ("replica_count", *POOL_INPUTS):
                if pool.get(name) not in (None, ""):
                    values[f"{role}_{name}"] = pool[name]
    for name in SIMPLE:
        if name not in values and request.get(name) not in (None, ""):
            values[name] = request[name]
    if isinstance(request.get("command"), list):
        values["command"] = shlex.join(str(a) for a in request["command"])
    if isinstance(request.get("env"), dict):
        values["env"] = show_pairs(request["env"])
    if isinstance(request.get("labels"), dict):
        values["labels"] = show_pairs(request["labels"])
    if isinstance(request.get("nfs_mounts"), list):
        values["nfs_mounts"] = show_mounts(request["nfs_mounts"])
    if isinstance(request.get("reserved_ip_ranges"), list):
        values["reserved_ip_ranges"] = ", ".join(request["reserved_ip_ranges"])
    for path, name in SETTINGS.items():
        node: Any = request
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None or path == "parallelism.data":
            continue
        if name in ("model_parameters_b", "model_trainable_b") and isinstance(node, int):
            node = node / BILLION
        if name in LIST_SETTINGS and isinstance(node, list):
            node = "\n".join(str(item) for item in node)
        values[name] = node
    optimizer = (request.get("deepspeed") or {}).get("optimizer") \
        if isinstance(request.get("deepspeed"), dict) else None
    if isinstance(optimizer, dict):
        betas = optimizer.get("betas")
        if isinstance(betas, list) and len(betas) == 2:
            values["ds_beta1"], values["ds_beta2"] = betas
        if optimizer.get("eps") is not None:
            values["ds_eps"] = optimizer["eps"]
    return values


# -- what the form cannot show ------------------------------------------------------------------

def diff(wanted: Any, shown: Any) -> Any:
    """The parts of ``wanted`` that ``shown`` lacks or has otherwise (None: nothing)."""
    if isinstance(wanted, dict) and isinstance(shown, dict):
        out = {}
        for key, value in wanted.items():
            if key not in shown:
                if not blank(value) and value is not False:
                    out[key] = value
                continue
            sub = diff(value, shown[key])
            if sub is not None:
                out[key] = sub
        return out or None
    return None if wanted == shown else wanted


def merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` laid over it, objects merged key by key."""
    out = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def leftovers(request: dict[str, Any]) -> dict[str, Any]:
    """What of ``request`` the form's inputs cannot hold: the advanced JSON."""
    request, _ = normalize(request)
    shown = request_from_fields(fields_from_request(request))
    return diff(request, shown) or {}
