"""A tuning job as gcloud's --config YAML or REST JSON, and either read back into a sweep request.

* YAML for ``gcloud ai hp-tuning-jobs create --config FILE``: the file holds the job's spec
  (studySpec, trialJobSpec and the trial counts); the display name and region are flags, so
  the first line is that gcloud command and an import reads them back from it.
* REST JSON: the HyperparameterTuningJob exactly as JobService.CreateHyperparameterTuningJob
  takes it.

An import gives the sweep request (study, counts, and the trial job's request read by the
CustomJob import, vertexplan/interop/request.py), with refusals keyed by document path.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any

import yaml

from vertexplan.interop.document import ImportFailed, load_yaml
from vertexplan.interop.export import _Dumper, _one_line
from vertexplan.interop.request import to_request

FORMATS = ("yaml", "json")
GCLOUD_PREFIX = "# gcloud ai hp-tuning-jobs create"
_OUTPUT_ONLY = ("name", "state", "createTime", "startTime", "endTime", "updateTime", "error",
                "trials")
_INVERSE_SPEC = {"doubleValueSpec": "DOUBLE", "integerValueSpec": "INTEGER",
                 "discreteValueSpec": "DISCRETE", "categoricalValueSpec": "CATEGORICAL"}
_PARENTS = ("parentDiscreteValues", "parentIntValues", "parentCategoricalValues")


def gcloud_command(tuning_job: dict[str, Any], *, region: str,
                   filename: str = "sweep.yaml") -> str:
    parts = ["gcloud", "ai", "hp-tuning-jobs", "create", f"--region={region}",
             f"--display-name={tuning_job.get('displayName', '')}"]
    parts.append(f"--config={filename}")
    return shlex.join(parts)


def to_yaml(tuning_job: dict[str, Any], *, region: str, filename: str = "sweep.yaml") -> str:
    body = {k: v for k, v in tuning_job.items()
            if k not in ("displayName", *_OUTPUT_ONLY) and v is not None}
    text = yaml.dump(body, Dumper=_Dumper, sort_keys=False, default_flow_style=False,
                     allow_unicode=True, width=10**6)
    return f"# {_one_line(gcloud_command(tuning_job, region=region, filename=filename))}\n{text}"


def to_json(tuning_job: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in tuning_job.items() if v is not None}, indent=2) + "\n"


def export(tuning_job: dict[str, Any], fmt: str, *, region: str) -> str:
    if fmt == "yaml":
        return to_yaml(tuning_job, region=region)
    if fmt == "json":
        return to_json(tuning_job)
    raise ValueError(f"unknown export format {fmt!r}; valid: {', '.join(FORMATS)}")


@dataclass
class ImportedSweep:
    request: dict[str, Any]
    errors: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def _header(text: str) -> dict[str, str]:
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if not first.startswith(GCLOUD_PREFIX):
        return {}
    try:
        words = shlex.split(first[1:])
    except ValueError:
        return {}
    flags = {}
    for word in words:
        if word.startswith("--") and "=" in word:
            key, value = word[2:].split("=", 1)
            flags[key] = value
    return flags


def import_text(text: str, *, region: str, name: str = "") -> ImportedSweep:
    """The sweep request of an exported (or hand-written) tuning job, YAML or JSON."""
    try:
        document = load_yaml(text)
    except yaml.YAMLError as exc:
        raise ImportFailed(f"not YAML or JSON: {exc}") from None
    if not isinstance(document, dict) or "studySpec" not in document:
        raise ImportFailed("expected a HyperparameterTuningJob (with studySpec and "
                           "trialJobSpec) as an object")
    header = _header(text)
    region = header.get("region") or region
    display = document.get("displayName") or header.get("display-name") or name
    study = document.get("studySpec") if isinstance(document.get("studySpec"), dict) else {}
    result = ImportedSweep(request={"display_name": display, "region": region})
    request = result.request
    request["metrics"] = [{"metric_id": m.get("metricId"), "goal": m.get("goal")}
                          for m in study.get("metrics") or [] if isinstance(m, dict)]
    request["parameters"] = [_parameter(p, f"studySpec.parameters[{i}]", result.errors)
                             for i, p in enumerate(study.get("parameters") or [])]
    if study.get("algorithm"):
        request["algorithm"] = study["algorithm"]
    if study.get("measurementSelectionType"):
        request["measurement_selection"] = study["measurementSelectionType"]
    for key in ("maxTrialCount", "parallelTrialCount", "maxFailedTrialCount"):
        if key in document:
            request[_snake(key)] = _int(document[key])
    spec = document.get("trialJobSpec")
    if not isinstance(spec, dict):
        result.errors["trialJobSpec"] = ["missing: the trials' CustomJobSpec"]
        return result
    trial = to_request({"displayName": display or "trial", "jobSpec": spec,
                        "labels": document.get("labels") or {}}, region=region)
    for path, messages in trial.errors.items():
        result.errors.setdefault(path.replace("jobSpec", "trialJobSpec", 1), []).extend(messages)
    result.warnings.extend(trial.warnings)
    trial.request.pop("name", None)
    request["trial_job"] = trial.request
    return result


def _parameter(raw: Any, where: str, errors: dict[str, list[str]]) -> dict[str, Any]:
    if not isinstance(raw, dict):
        errors.setdefault(where, []).append("must be an object")
        return {}
    out: dict[str, Any] = {"parameter_id": raw.get("parameterId")}
    for key, kind in _INVERSE_SPEC.items():
        if isinstance(raw.get(key), dict):
            out["type"] = kind
            spec = raw[key]
            if kind in ("DOUBLE", "INTEGER"):
                convert = _int if kind == "INTEGER" else (lambda v: v)
                out["min_value"] = convert(spec.get("minValue"))
                out["max_value"] = convert(spec.get("maxValue"))
            else:
                out["values"] = list(spec.get("values") or [])
            break
    else:
        errors.setdefault(where, []).append(
            "no value spec: give one of " + ", ".join(_INVERSE_SPEC))
    if raw.get("scaleType"):
        out["scale_type"] = raw["scaleType"]
    children = []
    for i, child in enumerate(raw.get("conditionalParameterSpecs") or []):
        if not isinstance(child, dict):
            continue
        parent = next((child[k] for k in _PARENTS if isinstance(child.get(k), dict)), {})
        values = list(parent.get("values") or [])
        if out.get("type") == "INTEGER":
            values = [_int(v) for v in values]
        children.append({"parent_values": values, "parameter": _parameter(
            child.get("parameterSpec"), f"{where}.conditionalParameterSpecs[{i}].parameterSpec",
            errors)})
    if children:
        out["conditional_parameters"] = children
    return out


def _int(value: Any) -> Any:
    """int64 fields come as JSON strings in REST; anything else is left for validation."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            return value
    return value


def _snake(name: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name)
