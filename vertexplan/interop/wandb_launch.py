"""W&B Launch's Vertex queue config, to and from a CustomJob (VERTEX_FACTS.md A8).

The queue config is `{"vertex": {"spec": {...}, "run": {...}}}` (or `gcp-vertex`), snake_case,
as wandb's Vertex runner reads it (wandb/sdk/launch/runner/vertex_runner.py): `spec` holds what
the SDK's `aiplatform.CustomJob(...)` takes (worker_pool_specs, staging_bucket, labels,
base_output_dir, encryption_spec_key_name), `run` what its `.run(...)` takes (timeout in
seconds, service_account, network, enable_web_access, experiment, experiment_run, tensorboard,
restart_job_on_worker_restart). W&B replaces the chief's command with the launched job's
entry point and appends its environment; everything else is passed on as written.

A CustomJob field the queue config has no place for (the scheduling strategy, a persistent
resource, reserved IP ranges...) is not written: `unsupported()` names them, so an export
can say what the queue will not carry instead of dropping it silently.
"""

from __future__ import annotations

import json
import re
from typing import Any

from vertexplan.catalog.schema import snake
from vertexplan.digits import ascii_int

KEYS = ("vertex", "gcp-vertex")
# CustomJobSpec field (REST JSON) <-> the queue config's `run` key.
RUN_FIELDS = {"serviceAccount": "service_account", "network": "network",
              "enableWebAccess": "enable_web_access", "experiment": "experiment",
              "experimentRun": "experiment_run", "tensorboard": "tensorboard"}
CARRIED_SPEC = {"workerPoolSpecs", "baseOutputDirectory", "scheduling", *RUN_FIELDS}
CARRIED_SCHEDULING = {"timeout", "restartJobOnWorkerRestart"}
_SECONDS = re.compile(r"(\d{1,9})(?:\.0+)?s")


# int64 fields REST JSON writes as strings; the SDK's dicts take numbers.
_INT64 = frozenset({"replica_count"})


def _snake_keys(value: Any) -> Any:
    """The proto's own key names, all the way down (a pool holds no maps of the user's)."""
    if isinstance(value, dict):
        out = {snake(k) if isinstance(k, str) else k: _snake_keys(v) for k, v in value.items()}
        for key in _INT64 & out.keys():
            if ascii_int(out[key]) is not None:
                out[key] = ascii_int(out[key])
        return out
    if isinstance(value, list):
        return [_snake_keys(v) for v in value]
    return value


def unsupported(custom_job: dict[str, Any]) -> list[str]:
    """The CustomJob's fields (dotted) that a queue config cannot carry."""
    spec = custom_job.get("jobSpec") or {}
    lost = [f"jobSpec.{k}" for k in spec if k not in CARRIED_SPEC and spec[k] not in
            (None, "", [], {})]
    scheduling = spec.get("scheduling") or {}
    lost += [f"jobSpec.scheduling.{k}" for k, v in scheduling.items()
             if k not in CARRIED_SCHEDULING and v not in (None, "", "STANDARD",
                                                          "STRATEGY_UNSPECIFIED", False)]
    if scheduling.get("timeout") and _timeout_seconds(scheduling["timeout"]) is None:
        lost.append("jobSpec.scheduling.timeout")  # the SDK takes whole seconds only
    return lost


def _timeout_seconds(value: Any) -> int | None:
    match = _SECONDS.fullmatch(str(value or ""))
    return int(match.group(1)) if match else None


def to_queue_config(custom_job: dict[str, Any]) -> dict[str, Any]:
    """A CustomJob (REST JSON) as a W&B Launch Vertex queue config."""
    spec = custom_job.get("jobSpec") or {}
    output = (spec.get("baseOutputDirectory") or {}).get("outputUriPrefix") or ""
    launch_spec: dict[str, Any] = {
        "worker_pool_specs": _snake_keys(spec.get("workerPoolSpecs") or [])}
    if output:
        # The SDK stages under staging_bucket; the job writes under base_output_dir.
        bucket = output.split("/", 3)[:3]
        launch_spec["staging_bucket"] = "/".join(bucket)
        launch_spec["base_output_dir"] = output
    if custom_job.get("labels"):
        launch_spec["labels"] = dict(custom_job["labels"])
    kms = (custom_job.get("encryptionSpec") or {}).get("kmsKeyName")
    if kms:
        launch_spec["encryption_spec_key_name"] = kms
    run: dict[str, Any] = {}
    scheduling = spec.get("scheduling") or {}
    run["restart_job_on_worker_restart"] = bool(scheduling.get("restartJobOnWorkerRestart"))
    timeout = _timeout_seconds(scheduling.get("timeout"))
    if timeout is not None:
        run["timeout"] = timeout
    for field, key in RUN_FIELDS.items():
        if spec.get(field) not in (None, ""):
            run[key] = spec[field]
    return {"vertex": {"spec": launch_spec, "run": run}}


def is_queue_config(document: Any) -> bool:
    return (isinstance(document, dict) and len(document) == 1
            and next(iter(document)) in KEYS
            and isinstance(document[next(iter(document))], dict))


KIND = "W&B Launch queue config"


def from_queue_config(document: dict[str, Any], *, display_name: str = "") -> dict[str, Any]:
    """A queue config as a CustomJob in the SDK's snake_case (the importer's normaliser turns
    it into REST JSON and checks it like any other)."""
    body = next(iter(document.values()))
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    run = body.get("run") if isinstance(body.get("run"), dict) else {}
    pools = spec.get("worker_pool_specs")
    if isinstance(pools, list):
        # REST JSON writes int64 as strings, as the composer does: the same job reads the same.
        pools = [{**p, "replica_count": str(p["replica_count"])}
                 if isinstance(p, dict) and isinstance(p.get("replica_count"), int)
                 and not isinstance(p.get("replica_count"), bool) else p for p in pools]
    job_spec: dict[str, Any] = {"worker_pool_specs": pools}
    if spec.get("base_output_dir"):
        job_spec["base_output_directory"] = {"output_uri_prefix": spec["base_output_dir"]}
    for field, key in RUN_FIELDS.items():
        if key in run:
            job_spec[snake(field)] = run[key]
    scheduling: dict[str, Any] = {}
    if "restart_job_on_worker_restart" in run:
        scheduling["restart_job_on_worker_restart"] = run["restart_job_on_worker_restart"]
    if "timeout" in run:
        value = run["timeout"]
        # The SDK's timeout is whole seconds; a Duration string is taken as written.
        scheduling["timeout"] = (f"{value}s" if isinstance(value, int)
                                 and not isinstance(value, bool) else value)
    if scheduling:
        job_spec["scheduling"] = scheduling
    job: dict[str, Any] = {"job_spec": job_spec}
    if display_name:
        job["display_name"] = display_name
    if spec.get("labels"):
        job["labels"] = spec["labels"]
    if spec.get("encryption_spec_key_name"):
        job["encryption_spec"] = {"kms_key_name": spec["encryption_spec_key_name"]}
    return job


IMAGE_MACRO = "${image_uri}"


def import_warnings(job: dict[str, Any]) -> list[str]:
    """What a person importing a queue config should know: W&B fills in some of it."""
    warnings = ["W&B Launch replaces the chief's command with the launched job's entry point "
                "and adds its environment: the command here is what runs without W&B."]
    pools = (job.get("job_spec") or {}).get("worker_pool_specs") or []
    images = [p["container_spec"].get("image_uri") for p in pools
              if isinstance(p, dict) and isinstance(p.get("container_spec"), dict)
              ] if isinstance(pools, list) else []
    if IMAGE_MACRO in images:
        warnings.append(f"the image is W&B's {IMAGE_MACRO} placeholder: set the image to run.")
    return warnings


def to_text(custom_job: dict[str, Any]) -> str:
    return json.dumps(to_queue_config(custom_job), indent=2) + "\n"
