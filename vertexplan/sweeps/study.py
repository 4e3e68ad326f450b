"""A sweep's study: its metrics, parameters and algorithm, checked and written as a StudySpec.

The request spells a study in the same snake_case as a job request:

    metrics     [{"metric_id": "val_loss", "goal": "MINIMIZE"}]
    parameters  [{"parameter_id": "lr", "type": "DOUBLE", "min_value": 1e-4, "max_value": 1e-2,
                  "scale_type": "UNIT_LOG_SCALE"},
                 {"parameter_id": "optimizer", "type": "CATEGORICAL", "values": ["adam", "sgd"],
                  "conditional_parameters": [{"parent_values": ["sgd"],
                                              "parameter": {...a parameter...}}]}]
    algorithm   ALGORITHM_UNSPECIFIED (Vertex's default, Bayesian), GRID_SEARCH, RANDOM_SEARCH

and ``study_spec`` turns it into the StudySpec of aiplatform.v1 (REST JSON, camelCase) as
VERTEX_FACTS.md A1 lists its fields. Errors are keyed by the request field path
("parameters[1].max_value").
"""

from __future__ import annotations

import itertools
import math
import re
from typing import Any

GOALS = ("MINIMIZE", "MAXIMIZE")
ALGORITHMS = ("ALGORITHM_UNSPECIFIED", "GRID_SEARCH", "RANDOM_SEARCH")
PARAMETER_TYPES = ("DOUBLE", "INTEGER", "DISCRETE", "CATEGORICAL")
SCALE_TYPES = ("UNIT_LINEAR_SCALE", "UNIT_LOG_SCALE", "UNIT_REVERSE_LOG_SCALE")
MEASUREMENT_SELECTIONS = ("LAST_MEASUREMENT", "BEST_MEASUREMENT")
# Grid search enumerates values: a continuous range has none (VERTEX_FACTS.md A1).
GRID_TYPES = ("INTEGER", "DISCRETE", "CATEGORICAL")
MAX_DISCRETE_VALUES = 1000
# Vertex passes each parameter to the trial as a command-line flag named by its id, and reads
# the metric the trial reports under its id: both are kept to plain identifiers, so a user's
# id can never become a second argument, a shell word or anything but one flag name.
IDENTIFIER = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
MAX_CATEGORY_LENGTH = 128
# Conditional parameters nest under a parent; Vertex's depth limit is UNCONFIRMED, this keeps
# a hostile request from recursing without end.
MAX_DEPTH = 3
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

_SPEC_KEY = {"DOUBLE": "doubleValueSpec", "INTEGER": "integerValueSpec",
             "DISCRETE": "discreteValueSpec", "CATEGORICAL": "categoricalValueSpec"}
_PARENT_KEY = {"DISCRETE": "parentDiscreteValues", "INTEGER": "parentIntValues",
               "CATEGORICAL": "parentCategoricalValues"}

Errors = dict[str, list[str]]


def _add(errors: Errors, key: str, message: str) -> None:
    errors.setdefault(key, []).append(message)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def metrics_spec(metrics: Any, errors: Errors) -> list[dict[str, Any]]:
    if not isinstance(metrics, list) or not metrics:
        _add(errors, "metrics", "give at least one metric: {\"metric_id\": \"val_loss\", "
             "\"goal\": \"MINIMIZE\"}")
        return []
    out = []
    seen: set[str] = set()
    for i, metric in enumerate(metrics):
        where = f"metrics[{i}]"
        if not isinstance(metric, dict):
            _add(errors, where, "must be an object with metric_id and goal")
            continue
        metric_id, goal = metric.get("metric_id"), metric.get("goal")
        if not isinstance(metric_id, str) or not IDENTIFIER.match(metric_id):
            _add(errors, f"{where}.metric_id", "must be a name of letters, digits, '_' and '-', "
                 "starting with a letter, at most 64 characters (the tag the trainer reports)")
        elif metric_id in seen:
            _add(errors, f"{where}.metric_id", f"{metric_id} is named twice")
        else:
            seen.add(metric_id)
        if goal not in GOALS:
            _add(errors, f"{where}.goal", f"must be one of {', '.join(GOALS)}")
        out.append({"metricId": metric_id, "goal": goal})
    # Several metrics: Vertex optimises them together with its own algorithm; the emulator's
    # search and the best-trial mark follow the first.
    return out


def parameters_spec(parameters: Any, algorithm: str, errors: Errors) -> list[dict[str, Any]]:
    if not isinstance(parameters, list) or not parameters:
        _add(errors, "parameters", "give at least one parameter to tune")
        return []
    seen: set[str] = set()
    return [_parameter(p, f"parameters[{i}]", algorithm, errors, seen, 0)
            for i, p in enumerate(parameters)]


def _parameter(raw: Any, where: str, algorithm: str, errors: Errors, seen: set[str],
               depth: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        _add(errors, where, "must be an object with parameter_id, type and its values")
        return {}
    parameter_id, kind = raw.get("parameter_id"), raw.get("type")
    if not isinstance(parameter_id, str) or not IDENTIFIER.match(parameter_id):
        _add(errors, f"{where}.parameter_id", "must be a name of letters, digits, '_' and '-', "
             "starting with a letter, at most 64 characters (it becomes the trial's --flag)")
    elif parameter_id in seen:
        _add(errors, f"{where}.parameter_id", f"{parameter_id} is named twice")
    else:
        seen.add(parameter_id)
    out: dict[str, Any] = {"parameterId": parameter_id}
    if kind not in PARAMETER_TYPES:
        _add(errors, f"{where}.type", f"must be one of {', '.join(PARAMETER_TYPES)}")
        return out
    if algorithm == "GRID_SEARCH" and kind not in GRID_TYPES:
        _add(errors, f"{where}.type", "GRID_SEARCH enumerates values, so it takes only "
             f"{', '.join(GRID_TYPES)} parameters; use RANDOM_SEARCH for a {kind} range")
    out[_SPEC_KEY[kind]] = _values(raw, kind, where, errors)
    scale = raw.get("scale_type")
    if kind == "CATEGORICAL":
        if scale not in (None, ""):
            _add(errors, f"{where}.scale_type", "a CATEGORICAL parameter has no scale type")
    elif scale not in (None, ""):
        if scale not in SCALE_TYPES:
            _add(errors, f"{where}.scale_type", f"must be one of {', '.join(SCALE_TYPES)}")
        elif scale != "UNIT_LINEAR_SCALE" and _low(out[_SPEC_KEY[kind]]) <= 0:
            _add(errors, f"{where}.scale_type", f"{scale} needs values above 0")
        out["scaleType"] = scale
    children = raw.get("conditional_parameters") or []
    if children:
        out["conditionalParameterSpecs"] = _conditionals(children, kind, out, where, algorithm,
                                                         errors, seen, depth)
    return out


def _low(spec: dict[str, Any]) -> float:
    if "minValue" in spec:
        return float(spec["minValue"]) if _number(spec["minValue"]) else 1.0
    values = spec.get("values") or [1.0]
    return float(values[0]) if _number(values[0]) else 1.0


def _values(raw: dict[str, Any], kind: str, where: str, errors: Errors) -> dict[str, Any]:
    if kind in ("DOUBLE", "INTEGER"):
        low, high = raw.get("min_value"), raw.get("max_value")
        check = _integer if kind == "INTEGER" else _number
        what = "an integer" if kind == "INTEGER" else "a finite number"
        for name, value in (("min_value", low), ("max_value", high)):
            if not check(value):
                _add(errors, f"{where}.{name}", f"must be {what}")
            elif kind == "INTEGER" and not INT64_MIN <= value <= INT64_MAX:
                _add(errors, f"{where}.{name}", "must fit in 64 bits (int64 on the wire)")
        if check(low) and check(high) and low > high:
            _add(errors, f"{where}.max_value", f"must be at least min_value ({low})")
        if kind == "INTEGER":
            # int64 on the wire, as a JSON string in REST (proto3 JSON writes int64 so).
            return {"minValue": str(low) if check(low) else low,
                    "maxValue": str(high) if check(high) else high}
        return {"minValue": low, "maxValue": high}
    values = raw.get("values")
    if not isinstance(values, list) or not values:
        _add(errors, f"{where}.values", "give at least one value")
        return {"values": []}
    if kind == "DISCRETE":
        if not all(_number(v) for v in values):
            _add(errors, f"{where}.values", "must be finite numbers")
        elif any(b <= a for a, b in itertools.pairwise(values)):
            _add(errors, f"{where}.values", "must be in ascending order, each value once")
        if len(values) > MAX_DISCRETE_VALUES:
            _add(errors, f"{where}.values", f"at most {MAX_DISCRETE_VALUES} values")
        return {"values": values}
    if not all(isinstance(v, str) and IDENTIFIER.match(v) and len(v) <= MAX_CATEGORY_LENGTH
               for v in values):
        _add(errors, f"{where}.values", "each category must be a word of letters, digits, "
             "'_' and '-', starting with a letter (it is passed to the trial as a flag value)")
    elif len(set(values)) != len(values):
        _add(errors, f"{where}.values", "each category once")
    return {"values": values}


def _conditionals(children: Any, kind: str, parent: dict[str, Any], where: str, algorithm: str,
                  errors: Errors, seen: set[str], depth: int) -> list[dict[str, Any]]:
    key = f"{where}.conditional_parameters"
    if kind == "DOUBLE":
        _add(errors, key, "a DOUBLE parameter cannot be a parent: conditions match exact "
             "values (INTEGER, DISCRETE or CATEGORICAL parents)")
        return []
    if depth + 1 >= MAX_DEPTH:
        _add(errors, key, f"conditional parameters nest at most {MAX_DEPTH} deep")
        return []
    if not isinstance(children, list):
        _add(errors, key, "must be a list of {parent_values, parameter}")
        return []
    allowed = _parent_values(parent[_SPEC_KEY[kind]], kind)
    out = []
    for i, child in enumerate(children):
        at = f"{key}[{i}]"
        if not isinstance(child, dict):
            _add(errors, at, "must be an object with parent_values and parameter")
            continue
        values = child.get("parent_values")
        if not isinstance(values, list) or not values:
            _add(errors, f"{at}.parent_values", "give the parent's values that enable it")
            values = []
        elif allowed is not None and any(
                isinstance(v, bool) or not isinstance(v, str | int | float) or v not in allowed
                for v in values):
            _add(errors, f"{at}.parent_values", "each must be one of the parent's values")
        spec = _parameter(child.get("parameter"), f"{at}.parameter", algorithm, errors, seen,
                          depth + 1)
        parent_values = [str(v) for v in values] if kind == "INTEGER" else values
        out.append({_PARENT_KEY[kind]: {"values": parent_values}, "parameterSpec": spec})
    return out


def _parent_values(spec: dict[str, Any], kind: str) -> range | list[Any] | None:
    if kind == "INTEGER":
        try:
            # A range, not a list: membership without building a billion-element list.
            return range(int(spec["minValue"]), int(spec["maxValue"]) + 1)
        except (KeyError, TypeError, ValueError):
            return None
    return spec.get("values")


def study_spec(request: dict[str, Any], errors: Errors) -> dict[str, Any]:
    algorithm = request.get("algorithm") or "ALGORITHM_UNSPECIFIED"
    if algorithm not in ALGORITHMS:
        _add(errors, "algorithm", f"must be one of {', '.join(ALGORITHMS)}")
    spec: dict[str, Any] = {
        "metrics": metrics_spec(request.get("metrics"), errors),
        "parameters": parameters_spec(request.get("parameters"), algorithm, errors),
    }
    if algorithm != "ALGORITHM_UNSPECIFIED":
        spec["algorithm"] = algorithm
    selection = request.get("measurement_selection")
    if selection not in (None, ""):
        if selection not in MEASUREMENT_SELECTIONS:
            _add(errors, "measurement_selection",
                 f"must be one of {', '.join(MEASUREMENT_SELECTIONS)}")
        spec["measurementSelectionType"] = selection
    return spec


def grid_size(parameters: list[dict[str, Any]]) -> int | None:
    """How many points a grid over these (top-level) parameters has; None when a parameter
    cannot be enumerated."""
    size = 1
    for parameter in parameters:
        if "discreteValueSpec" in parameter or "categoricalValueSpec" in parameter:
            spec = parameter.get("discreteValueSpec") or parameter.get("categoricalValueSpec")
            size *= max(1, len(spec.get("values") or []))
        elif "integerValueSpec" in parameter:
            spec = parameter["integerValueSpec"]
            try:
                size *= max(1, int(spec["maxValue"]) - int(spec["minValue"]) + 1)
            except (KeyError, TypeError, ValueError):
                return None
        else:
            return None
    return size
