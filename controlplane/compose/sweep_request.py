"""The sweep form <-> the sweep request the API takes (controlplane/sweeps/lifecycle.py).

The parameter table is flat; the request nests a conditional parameter under its parent:

    rows   optimizer CATEGORICAL adam,sgd        |  momentum DOUBLE 0.5..0.99  parent optimizer=sgd
    request {"parameter_id": "optimizer", ..., "conditional_parameters": [
                {"parent_values": ["sgd"], "parameter": {"parameter_id": "momentum", ...}}]}

``build`` keeps which row each request path came from, so the check's messages
("parameters[0].conditional_parameters[0].parameter.max_value") land on the row and column
they name; ``attach`` puts every message on its field, the trial job's on the compose form's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from controlplane.compose.sweep_forms import (
    RANGE_TYPES,
    ParameterForm,
    StudyForm,
    TrialJobForm,
    number,
    split_list,
)

COUNT_FIELDS = ("max_trial_count", "parallel_trial_count", "max_failed_trial_count")
STUDY_FIELDS = ("display_name", "algorithm", "measurement_selection", "trial_hours",
                *COUNT_FIELDS)
ROW_FIELDS = ("parameter_id", "type", "min_value", "max_value", "values", "scale_type")


@dataclass
class Built:
    request: dict[str, Any]
    # request path of a parameter ("parameters[0].conditional_parameters[1].parameter") and
    # of a conditional entry ("parameters[0].conditional_parameters[1]") -> its row
    parameter_rows: dict[str, ParameterForm] = field(default_factory=dict)
    condition_rows: dict[str, ParameterForm] = field(default_factory=dict)
    table_errors: list[str] = field(default_factory=list)


def build(study: StudyForm, rows: Any, trial_request: dict[str, Any]) -> Built:
    """The sweep request of valid (parsed) forms. A row whose parent cannot be found gets
    its error here; the caller checks the rows' errors before using the request."""
    data = study.cleaned_data
    request: dict[str, Any] = {
        "display_name": (data.get("display_name") or "").strip(),
        "metrics": [{"metric_id": (data.get("metric_id") or "").strip(),
                     "goal": data.get("goal")}],
        "algorithm": data.get("algorithm"),
    }
    if data.get("measurement_selection"):
        request["measurement_selection"] = data["measurement_selection"]
    for name in COUNT_FIELDS:
        if data.get(name) is not None:
            request[name] = data[name]
    if (data.get("trial_hours") or "").strip():
        request["trial_hours"] = data["trial_hours"].strip()
    built = Built(request=request)
    request["parameters"] = _tree([row for row in rows.forms if not row.is_blank()], built)
    request["trial_job"] = trial_request
    return built


def _tree(rows: list[ParameterForm], built: Built) -> list[dict[str, Any]]:
    first_of: dict[str, ParameterForm] = {}
    for row in rows:
        first_of.setdefault(row.cleaned_data["parameter_id"].strip(), row)
    children: dict[int, list[ParameterForm]] = {}
    roots = []
    for row in rows:
        parent = (row.cleaned_data.get("parent") or "").strip()
        if not parent:
            roots.append(row)
        elif parent not in first_of:
            known = ", ".join(sorted(p for p in first_of if p)) or "none yet"
            row.add_error("parent", f"no parameter {parent!r} in the table (its ids: {known})")
        elif first_of[parent] is row:
            row.add_error("parent", "a parameter cannot be its own parent")
        else:
            children.setdefault(id(first_of[parent]), []).append(row)
    placed: set[int] = set()

    def place(row: ParameterForm, path: str) -> dict[str, Any]:
        placed.add(id(row))
        built.parameter_rows[path] = row
        spec = row.as_parameter()
        nested = []
        for number_, child in enumerate(children.get(id(row), [])):
            at = f"{path}.conditional_parameters[{number_}]"
            built.condition_rows[at] = child
            nested.append({"parent_values": _parent_values(child, spec.get("type")),
                           "parameter": place(child, f"{at}.parameter")})
        if nested:
            spec["conditional_parameters"] = nested
        return spec

    parameters = [place(row, f"parameters[{i}]") for i, row in enumerate(roots)]
    for row in rows:
        if id(row) not in placed and not row.errors:
            row.add_error("parent", "its parents lead back to it: one of them must have none")
    return parameters


def _parent_values(row: ParameterForm, parent_type: str | None) -> list[Any]:
    texts = split_list(row.cleaned_data.get("parent_values") or "")
    if parent_type not in ("INTEGER", "DISCRETE"):
        return texts
    try:
        return [number(t, whole=parent_type == "INTEGER") for t in texts]
    except ValueError as exc:
        row.add_error("parent_values", f"the parent is {parent_type}: {exc}")
        return texts


def attach(errors: dict[str, list[str]], built: Built, study: StudyForm,
           trial: TrialJobForm) -> None:
    """Put the sweep check's messages (keyed by request path) on the fields they name."""
    trial_errors: dict[str, list[str]] = {}
    for key, messages in errors.items():
        for message in messages:
            if key == "trial_job.name":
                study.add_error("display_name", message)  # the trials carry the sweep's name
            elif key.startswith("trial_job."):
                trial_errors.setdefault(key[len("trial_job."):], []).append(message)
            elif key == "trial_job":
                trial.add_error(None, message)
            else:
                _on_study(key, message, built, study)
    trial.attach(trial_errors)


def _on_study(key: str, message: str, built: Built, study: StudyForm) -> None:
    if key.startswith("parameters[") and _on_row(key, message, built):
        return
    if key == "parameters":
        built.table_errors.append(message)
        return
    if key.startswith("metrics"):
        study.add_error("goal" if key.endswith(".goal") else "metric_id", message)
        return
    name = re.split(r"[.\[]", key, maxsplit=1)[0]
    if name in STUDY_FIELDS:
        study.add_error(name, message)
    else:
        study.add_error(None, f"{key}: {message}" if key else message)


def _on_row(key: str, message: str, built: Built) -> bool:
    """The row (and column) a parameter path names; False when none matches."""
    for paths, column_of in ((built.parameter_rows, _parameter_column),
                             (built.condition_rows, _condition_column)):
        match = max((p for p in paths if key == p or key.startswith(p + ".")), key=len,
                    default=None)
        if match is not None:
            row = paths[match]
            rest = key[len(match):].lstrip(".")
            row.add_error(column_of(rest), message)
            return True
    return False


def _parameter_column(rest: str) -> str | None:
    name = re.split(r"[.\[]", rest, maxsplit=1)[0]
    return name if name in ROW_FIELDS else None


def _condition_column(rest: str) -> str | None:
    return "parent_values" if rest.startswith("parent_values") else "parent"


# -- a stored request back into the form (clone) --------------------------------------------

def initial_from_request(request: dict[str, Any]) -> tuple[dict[str, Any],
                                                           list[dict[str, Any]]]:
    """The study form's initial values and the parameter rows of a sweep request."""
    metrics = request.get("metrics") if isinstance(request.get("metrics"), list) else []
    metric = metrics[0] if metrics and isinstance(metrics[0], dict) else {}
    study = {"display_name": f"{request.get('display_name') or 'sweep'}-clone"[:128],
             "metric_id": metric.get("metric_id") or "", "goal": metric.get("goal") or "",
             "algorithm": request.get("algorithm") or "ALGORITHM_UNSPECIFIED",
             "measurement_selection": request.get("measurement_selection") or "",
             "trial_hours": str(request.get("trial_hours") or "")}
    study.update({name: request.get(name) for name in COUNT_FIELDS if name in request})
    rows: list[dict[str, Any]] = []
    for parameter in request.get("parameters") or []:
        _flatten(parameter, None, [], rows)
    return study, rows


def _flatten(parameter: Any, parent: str | None, parent_values: list[Any],
             rows: list[dict[str, Any]]) -> None:
    if not isinstance(parameter, dict):
        return
    kind = parameter.get("type") or ""
    row = {"parameter_id": parameter.get("parameter_id") or "", "type": kind,
           "scale_type": parameter.get("scale_type") or "", "parent": parent or "",
           "parent_values": ", ".join(str(v) for v in parent_values)}
    if kind in RANGE_TYPES:
        row.update(min_value=_text(parameter.get("min_value")),
                   max_value=_text(parameter.get("max_value")))
    else:
        row["values"] = ", ".join(str(v) for v in parameter.get("values") or [])
    rows.append(row)
    for child in parameter.get("conditional_parameters") or []:
        if isinstance(child, dict):
            values = child.get("parent_values")
            _flatten(child.get("parameter"), row["parameter_id"],
                     values if isinstance(values, list) else [], rows)


def _text(value: Any) -> str:
    return "" if value is None else str(value)
