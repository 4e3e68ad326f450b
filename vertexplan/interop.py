"""A composed job in the formats people already use, and back into a job request.

Exports:
* YAML for ``gcloud ai custom-jobs create --config FILE``: gcloud reads a CustomJobSpec there
  (display name, labels and region are flags), so the file is the jobSpec and its first line is
  the gcloud command with those flags; an import reads them back from that line.
* REST JSON: the CustomJob exactly as JobService.CreateCustomJob takes it.
* Python: a google-cloud-aiplatform (GAPIC) snippet that submits the same CustomJob.

Imports take a CustomJob or a CustomJobSpec (YAML or JSON) and give the job request that
composes to it. The strategy's configuration is read back from the generated arguments and
environment only when composing the reading gives the very same container; otherwise the
command, arguments and environment are kept verbatim, so nothing is lost either way.
"""

from __future__ import annotations

import copy
import json
import pprint
import re
import shlex
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from vertexplan import catalog, composer
from vertexplan.catalog.enums import strategy_name
from vertexplan.catalog.lookups import ACCELERATOR_UNSPECIFIED, accelerator_name
from vertexplan.catalog.values import as_int, parse_duration
from vertexplan.composer import parallelism
from vertexplan.composer.request import PASSTHROUGH_JOB_SPEC

FORMATS = ("yaml", "json", "python")
GCLOUD_PREFIX = "# gcloud ai custom-jobs create"
OUTPUT_ONLY = ("name", "state", "createTime", "startTime", "endTime", "updateTime", "error",
               "webAccessUris", "satisfiesPzs", "satisfiesPzi")
# Fields the composer has no request field for and cannot carry: refused on import.
UNSUPPORTED_POOL = {
    "pythonPackageSpec": "the composer runs containers: build an image with your package and "
                         "give it as containerSpec.imageUri",
    "lustreMounts": "Lustre mounts are not supported by the composer yet: use nfsMounts or "
                    "Cloud Storage (baseOutputDirectory)",
}
UNSUPPORTED_MACHINE = {
    "gpuPartitionSize": "GPU partitions (MIG) are not supported by the composer",
    "multihostGpuNodeCount": "multi-host GPU nodes are not supported by the composer",
}
_SPEC_FIELDS = {
    "network": "network", "reservedIpRanges": "reserved_ip_ranges",
    "serviceAccount": "service_account", "enableWebAccess": "enable_web_access",
    "enableDashboardAccess": "enable_dashboard_access",
}


class ImportFailed(ValueError):
    """The text is not a CustomJob or CustomJobSpec in YAML or JSON."""


@dataclass
class Imported:
    request: dict[str, Any]
    # Keyed by the imported document's field paths (jobSpec.workerPoolSpecs[0]...).
    errors: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    kind: str = "CustomJob"  # or CustomJobSpec
    custom_job: dict[str, Any] = field(default_factory=dict)  # the document as a CustomJob


# -- export ---------------------------------------------------------------------------------

def gcloud_command(custom_job: dict[str, Any], *, region: str, filename: str = "job.yaml") -> str:
    parts = ["gcloud", "ai", "custom-jobs", "create", f"--region={region}",
             f"--display-name={custom_job.get('displayName', '')}"]
    labels = custom_job.get("labels") or {}
    if labels:
        parts.append("--labels=" + ",".join(f"{k}={v}" for k, v in labels.items()))
    parts.append(f"--config={filename}")
    return shlex.join(parts)


class _Dumper(yaml.SafeDumper):
    """Block style, keys in the composer's order, long strings (JSON in env) on one line."""

    def ignore_aliases(self, data: Any) -> bool:
        return True  # pools share their container's lists: write each out, no &anchors


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def to_yaml(custom_job: dict[str, Any], *, region: str, filename: str = "job.yaml") -> str:
    """The gcloud --config file: the jobSpec, after a comment line with the gcloud command."""
    body = yaml.dump(custom_job.get("jobSpec") or {}, Dumper=_Dumper, sort_keys=False,
                     default_flow_style=False, allow_unicode=True, width=10**6)
    extra = ""
    if custom_job.get("encryptionSpec"):
        extra = ("# encryptionSpec (not a gcloud --config field): "
                 + json.dumps(custom_job["encryptionSpec"], sort_keys=True) + "\n")
    return f"# {gcloud_command(custom_job, region=region, filename=filename)}\n{extra}{body}"


def to_json(custom_job: dict[str, Any]) -> str:
    return json.dumps(custom_job, indent=2) + "\n"


# The snippet is a file of its own: it is the user's program, not this package's, and the
# Google client it imports belongs to them (this package imports Google's libraries only in
# controlplane/backends/).
_PYTHON_SNIPPET = string.Template(
    (Path(__file__).parent / "interop_templates" / "submit_custom_job.py.txt").read_text())


def to_python(custom_job: dict[str, Any], *, region: str, project: str) -> str:
    literal = pprint.pformat(custom_job, indent=1, width=96, sort_dicts=False)
    title = f"Submit {custom_job.get('displayName') or 'the job'} to Vertex AI"
    return _PYTHON_SNIPPET.substitute(title=title, project=repr(project), region=repr(region),
                                      literal=literal)


def export(custom_job: dict[str, Any], fmt: str, *, region: str, project: str = "my-project",
           filename: str = "job.yaml") -> str:
    if fmt == "yaml":
        return to_yaml(custom_job, region=region, filename=filename)
    if fmt == "json":
        return to_json(custom_job)
    if fmt == "python":
        return to_python(custom_job, region=region, project=project)
    raise ValueError(f"unknown export format {fmt!r}; valid: {', '.join(FORMATS)}")


# -- reading a document -------------------------------------------------------------------------

_FLAG = re.compile(r"--(region|display-name|labels)=(.*)", re.S)


def _header(text: str) -> dict[str, Any]:
    """The flags of the gcloud command line an export starts with."""
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("#"):
            break
        if line.startswith(GCLOUD_PREFIX):
            try:
                words = shlex.split(line[1:])
            except ValueError:
                words = line[1:].split()
            out: dict[str, Any] = {}
            for word in words:
                match = _FLAG.fullmatch(word)
                if not match:
                    continue
                name, value = match.groups()
                if name == "labels":
                    out["labels"] = dict(pair.partition("=")[::2] for pair in value.split(",")
                                         if pair)
                else:
                    out[name] = value
            return out
        if line.startswith("# encryptionSpec"):
            continue
    return {}


def _encryption(text: str) -> dict[str, Any] | None:
    for line in text.splitlines():
        if line.startswith("# encryptionSpec"):
            try:
                return json.loads(line.partition(": ")[2])
            except ValueError:
                return None
    return None


def parse(text: str) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """(the CustomJob, 'CustomJob' or 'CustomJobSpec', header flags) from YAML or JSON text."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        try:
            document = json.loads(text)
        except ValueError:
            raise ImportFailed(f"not YAML or JSON: {exc}") from None
    if not isinstance(document, dict):
        raise ImportFailed("expected a CustomJob (with jobSpec) or a CustomJobSpec (with "
                           "workerPoolSpecs) as an object")
    header = _header(text)
    if "jobSpec" in document:
        return document, "CustomJob", header
    if "workerPoolSpecs" in document:
        job: dict[str, Any] = {"displayName": header.get("display-name", ""),
                               "jobSpec": document}
        if header.get("labels"):
            job["labels"] = header["labels"]
        encryption = _encryption(text)
        if encryption:
            job["encryptionSpec"] = encryption
        return job, "CustomJobSpec", header
    raise ImportFailed("no jobSpec or workerPoolSpecs: this is not a CustomJob or a "
                       "CustomJobSpec (gcloud's --config file)")


# -- CustomJob -> job request ---------------------------------------------------------------

def _container(c: Any) -> dict[str, Any]:
    """A container spec with Vertex's defaults written out, for comparisons."""
    c = c if isinstance(c, dict) else {}
    env = [{"name": e.get("name"), "value": e.get("value", "")} if isinstance(e, dict) else e
           for e in (c.get("env") or [])]
    return {"imageUri": c.get("imageUri"), "command": list(c.get("command") or []),
            "args": list(c.get("args") or []), "env": env}


def _env_dict(env: list[Any]) -> dict[str, str] | None:
    out: dict[str, str] = {}
    for entry in env:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) \
                or entry["name"] in out:
            return None
        out[entry["name"]] = entry.get("value", "")
    return out


def _machine(spec: Any) -> dict[str, Any]:
    spec = spec if isinstance(spec, dict) else {}
    out: dict[str, Any] = {}
    if "machineType" in spec:
        out["machine_type"] = spec["machineType"]
    if spec.get("acceleratorType") is not None:
        name = accelerator_name(spec["acceleratorType"])
        if name != ACCELERATOR_UNSPECIFIED:
            out["accelerator_type"] = name or spec["acceleratorType"]
    if spec.get("acceleratorCount") not in (None, 0, "0"):
        count = as_int(spec["acceleratorCount"], bits=32)
        out["accelerator_count"] = count if count is not None else spec["acceleratorCount"]
    if spec.get("tpuTopology"):
        out["tpu_topology"] = spec["tpuTopology"]
    affinity = spec.get("reservationAffinity")
    if isinstance(affinity, dict):
        reservation = {"type": affinity.get("reservationAffinityType")}
        for key in ("key", "values"):
            if affinity.get(key):
                reservation[key] = affinity[key]
        out["reservation"] = reservation
    elif affinity is not None:
        out["reservation"] = affinity
    return out


def _disk(spec: Any) -> dict[str, Any]:
    if not isinstance(spec, dict):
        return {}
    out: dict[str, Any] = {}
    if spec.get("bootDiskType"):
        out["boot_disk_type"] = spec["bootDiskType"]
    if spec.get("bootDiskSizeGb") not in (None, 0):
        size = as_int(spec["bootDiskSizeGb"], bits=32)
        out["boot_disk_size_gb"] = size if size is not None else spec["bootDiskSizeGb"]
    return out


def _mounts(mounts: Any) -> Any:
    if not isinstance(mounts, list):
        return mounts
    return [{"server": m.get("server"), "path": m.get("path"), "mount_point": m.get("mountPoint")}
            if isinstance(m, dict) else m for m in mounts]


def _hours(value: Any) -> Any:
    seconds = parse_duration(value)
    if seconds is None:
        return value
    hours = float(seconds) / 3600
    return int(hours) if hours.is_integer() else hours


def _refusals(job: dict[str, Any]) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    pools = (job.get("jobSpec") or {}).get("workerPoolSpecs")
    for i, p in enumerate(pools if isinstance(pools, list) else []):
        if not isinstance(p, dict):
            continue
        for key, why in UNSUPPORTED_POOL.items():
            if key in p:
                errors[f"jobSpec.workerPoolSpecs[{i}].{key}"] = [f"{key}: {why}"]
        machine = p.get("machineSpec") if isinstance(p.get("machineSpec"), dict) else {}
        for key, why in UNSUPPORTED_MACHINE.items():
            if key in machine:
                errors[f"jobSpec.workerPoolSpecs[{i}].machineSpec.{key}"] = [f"{key}: {why}"]
    psc = (job.get("jobSpec") or {}).get("pscInterfaceConfig")
    if isinstance(psc, dict):
        for key in psc:
            if key != "networkAttachment":
                errors[f"jobSpec.pscInterfaceConfig.{key}"] = [
                    f"pscInterfaceConfig.{key} is not supported by the composer: only "
                    "networkAttachment"]
    return errors


def to_request(custom_job: dict[str, Any], *, region: str) -> Imported:
    """The job request that composes to ``custom_job``; refusals keyed by the job's paths."""
    job = {k: v for k, v in copy.deepcopy(custom_job).items() if k not in OUTPUT_ONLY}
    result = Imported(request={}, custom_job=job, errors=_refusals(job))
    spec = job.get("jobSpec") if isinstance(job.get("jobSpec"), dict) else {}
    request: dict[str, Any] = {"name": job.get("displayName", ""), "region": region}
    if job.get("labels"):
        request["labels"] = job["labels"]
    if job.get("encryptionSpec"):
        request["encryption_spec"] = job["encryptionSpec"]
    _scheduling(spec.get("scheduling"), request)
    for key, name in _SPEC_FIELDS.items():
        if key in spec and spec[key] not in (None, "", [], False):
            request[name] = spec[key]
    psc = spec.get("pscInterfaceConfig")
    if isinstance(psc, dict) and psc.get("networkAttachment"):
        request["psc_network_attachment"] = psc["networkAttachment"]
    out = spec.get("baseOutputDirectory")
    if isinstance(out, dict) and out.get("outputUriPrefix"):
        request["base_output_directory"] = out["outputUriPrefix"]
    extra = {k: spec[k] for k in PASSTHROUGH_JOB_SPEC if k in spec}
    if extra:
        request["job_spec_extra"] = extra

    raw_pools = spec.get("workerPoolSpecs")
    if isinstance(raw_pools, dict):
        raw_pools = [raw_pools]  # gcloud's examples write a single pool as a mapping
        result.warnings.append("workerPoolSpecs was a single mapping; read as a list of one")
    pools = [p if isinstance(p, dict) else {} for p in (raw_pools or [])]
    if not pools or not pools[0]:
        result.request = request
        return result
    chief_raw = pools[0]
    request["chief"] = {**_machine(chief_raw.get("machineSpec")),
                        **_disk(chief_raw.get("diskSpec"))}
    replicas = chief_raw.get("replicaCount")
    if replicas is not None and as_int(replicas) != 1:
        number = as_int(replicas)
        request["chief"]["replica_count"] = number if number is not None else replicas
    if chief_raw.get("nfsMounts"):
        request["nfs_mounts"] = _mounts(chief_raw["nfsMounts"])
    # The pools' shapes first: the strategy's batch and degrees depend on the world size.
    roles = {}
    for index, raw in enumerate(pools[1:4], start=1):
        if raw:
            roles[index] = _role(index, raw, region)
            request[roles[index]] = _pool(roles[index], raw, request, region)
    for key, message, trial in _read_launch(request, _container(chief_raw.get("containerSpec"))):
        path = composer.custom_job_path_for(key, trial, job)
        result.errors.setdefault(path, []).append(message)
    final_chief = _container(composer.compose(request).custom_job["jobSpec"]
                             ["workerPoolSpecs"][0].get("containerSpec"))
    for index, role in roles.items():
        if role != "reduction_server":
            request[role].update(_overrides(pools[index], request, final_chief))
    result.request = request
    return result


def _scheduling(scheduling: Any, request: dict[str, Any]) -> None:
    # Vertex's default is not to restart the job with a worker; the composer's default
    # (restart multi-replica jobs) must not apply to a job that says nothing.
    request["restart_job_on_worker_restart"] = False
    if not isinstance(scheduling, dict):
        return
    if scheduling.get("strategy") is not None:
        name = strategy_name(scheduling["strategy"])
        if name not in (None, "STRATEGY_UNSPECIFIED"):
            request["scheduling_strategy"] = name
        elif name is None:
            request["scheduling_strategy"] = scheduling["strategy"]
    if "restartJobOnWorkerRestart" in scheduling:
        request["restart_job_on_worker_restart"] = scheduling["restartJobOnWorkerRestart"]
    if scheduling.get("disableRetries"):
        request["disable_retries"] = scheduling["disableRetries"]
    if scheduling.get("timeout") is not None:
        request["timeout_hours"] = _hours(scheduling["timeout"])
    if scheduling.get("maxWaitDuration") is not None:
        request["max_wait_hours"] = _hours(scheduling["maxWaitDuration"])


def _role(index: int, raw: dict[str, Any], region: str) -> str:
    if index == 1:
        return "workers"
    if index == 3:
        return "evaluators"
    container = raw.get("containerSpec") if isinstance(raw.get("containerSpec"), dict) else {}
    image = container.get("imageUri")
    plain = set(container) <= {"imageUri"} and "nfsMounts" not in raw
    if isinstance(image, str) and catalog.is_reduction_server_image(image) and plain:
        return "reduction_server"
    return "parameter_servers"


def _pool(role: str, raw: dict[str, Any], request: dict[str, Any],
          region: str) -> dict[str, Any]:
    """The pool's machine, disk and replicas (and a Reduction Server's image)."""
    machine, disk = _machine(raw.get("machineSpec")), _disk(raw.get("diskSpec"))
    out: dict[str, Any] = {}
    replicas = raw.get("replicaCount")
    if replicas is not None:
        number = as_int(replicas)
        out["replica_count"] = number if number is not None else replicas
    if role == "reduction_server":
        out.update(machine)
        out.update(disk)
        image = (raw.get("containerSpec") or {}).get("imageUri")
        try:
            default = catalog.reduction_server_image(region)
        except catalog.UnknownRegionError:
            default = None
        if image != default:
            out["image_uri"] = image
        return out
    chief = request.get("chief") or {}
    chief_machine = {k: v for k, v in chief.items() if k in _MACHINE_KEYS}
    chief_disk = {k: v for k, v in chief.items() if k in ("boot_disk_type", "boot_disk_size_gb")}
    if not (role == "workers" and machine == chief_machine and machine):
        out.update(machine)  # otherwise the workers inherit the chief's machine
    if not (role == "workers" and disk == chief_disk):
        out.update(disk)
        if role == "workers":
            # A workers pool with its own machine still inherits a missing disk field.
            for key in ("boot_disk_type", "boot_disk_size_gb"):
                if key not in disk and key in chief_disk:
                    out[key] = {"boot_disk_type": "pd-ssd", "boot_disk_size_gb": 100}[key]
    return out


def _overrides(raw: dict[str, Any], request: dict[str, Any],
               chief_container: dict[str, Any]) -> dict[str, Any]:
    """What a pool runs differently from the chief: kept as the pool's own values."""
    out: dict[str, Any] = {}
    own = _container(raw.get("containerSpec"))
    for key, name in (("imageUri", "image_uri"), ("command", "command"), ("args", "args")):
        if own[key] != chief_container[key]:
            out[name] = own[key]
    if own["env"] != chief_container["env"]:
        env = _env_dict(own["env"])
        out["env"] = env if env is not None else own["env"]
    mounts = raw.get("nfsMounts")
    if _mounts(mounts or []) != (request.get("nfs_mounts") or []):
        out["nfs_mounts"] = _mounts(mounts or [])
    return out


_MACHINE_KEYS = ("machine_type", "accelerator_type", "accelerator_count", "tpu_topology",
                 "reservation")


_STRATEGY_KEYS = ("strategy", "batch", "deepspeed", "fsdp", "parallelism", "precision")


def _read_launch(request: dict[str, Any], container: dict[str, Any]
                 ) -> list[tuple[str, str, dict[str, Any]]]:
    """Fill strategy, command, args and env: the first reading that composes back exactly.

    Returns what was wrong with the strategy's own configuration when it could not be read
    as one (request key, message, the request it was read into)."""
    request["image_uri"] = container["imageUri"]
    env = _env_dict(container["env"])
    chief = request.get("chief") or {}
    machine = chief.get("machine_type")
    tpu = isinstance(machine, str) and catalog.is_tpu(machine)
    candidates: list[dict[str, Any]] = []
    if env is not None:
        structured = parallelism.parse_env(env)
        rest_env = {k: v for k, v in env.items() if k not in parallelism.GENERATED_ENV}
        if tpu:
            structured["strategy"] = "tpu_xla" if env.get(parallelism.PJRT_ENV) == "TPU" \
                else "tpu_jax"
            if structured["strategy"] == "tpu_jax" and parallelism.PJRT_ENV in env:
                rest_env[parallelism.PJRT_ENV] = env[parallelism.PJRT_ENV]
        parsed = None
        if container["command"] == parallelism.TRAINER_COMMAND:
            parsed = parallelism.parse_builtin_args(container["args"])
        if parsed is not None:
            fields, user_args = parsed
            merged = {**structured, **_merge(structured, fields)}
            candidates.append({**merged, "env": rest_env, "args": user_args})
        candidates.append({**structured, "env": rest_env, **_verbatim(container)})
        candidates.append({"strategy": "tpu_jax" if tpu else "ddp", "env": env,
                           **_verbatim(container)})
    else:
        candidates.append({"strategy": "tpu_jax" if tpu else "ddp", "env": container["env"],
                           **_verbatim(container)})
    problems: list[tuple[str, str, dict[str, Any]]] = []
    for candidate in candidates:
        trial = {**request, **{k: v for k, v in candidate.items() if v not in (None, {})}}
        composed = composer.compose(trial)
        pool0 = composed.custom_job["jobSpec"]["workerPoolSpecs"][0]
        if _container(pool0.get("containerSpec")) == container:
            request.clear()
            request.update(trial)
            return problems
        if not problems and candidate is not candidates[-1]:
            # The generated configuration reads as a strategy that does not fit this job (a
            # DeepSpeed batch for another world size): what is wrong with it is worth saying
            # even though the job is kept verbatim.
            problems = [(key, message, trial) for key, messages in composed.errors.items()
                        if key.split(".", 1)[0] in _STRATEGY_KEYS for message in messages]
    request.update({k: v for k, v in candidates[-1].items() if v not in (None, {})})
    return problems


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


def import_text(text: str, *, region: str) -> Imported:
    job, kind, header = parse(text)
    region = header.get("region") or region
    result = to_request(job, region=region)
    result.kind = kind
    return result
