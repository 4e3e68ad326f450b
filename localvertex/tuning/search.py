"""The emulator's study search: which parameters the next trial runs with.

* RANDOM_SEARCH: every parameter drawn on its own, uniformly in its scale (UNIT_LOG_SCALE:
  uniform in log; UNIT_REVERSE_LOG_SCALE: the mirror image, dense near the maximum).
* GRID_SEARCH: the points of the grid of INTEGER, DISCRETE and CATEGORICAL values, in order;
  the study ends when they run out.
* ALGORITHM_UNSPECIFIED, Vertex's default, is Google's Bayesian optimisation (Vizier), which
  cannot be reproduced here: the emulator approximates it with random trials first, then draws
  each parameter near the best trial so far (a local random search). It says so in the job's
  log.

Conditional parameters are drawn only when their parent's value is one of theirs. Every draw
is seeded by the job id and trial number, so a trial's parameters never change when the
emulator restarts.
"""

from __future__ import annotations

import itertools
import math
import random
from typing import Any

from google.cloud import aiplatform_v1

Algorithm = aiplatform_v1.StudySpec.Algorithm
ScaleType = aiplatform_v1.StudySpec.ParameterSpec.ScaleType

APPROXIMATED_NOTE = (
    "The emulator approximates Vertex's default search (Bayesian optimisation, Google's own) "
    "with random trials followed by a local random search around the best trial so far."
)
# Random trials before the approximation starts searching near the best one.
EXPLORE_TRIALS = 2
NEAR_SPREAD = 0.15  # of the parameter's range, in its scale
KEEP_CHOICE = 0.7   # chance a DISCRETE/CATEGORICAL parameter keeps the best trial's value

Values = dict[str, Any]


def rng_for(job_id: str, trial: int) -> random.Random:
    return random.Random(f"{job_id}/{trial}")


def _scaled(spec: Any, low: float, high: float, u: float) -> float:
    """The value at fraction ``u`` (0..1) of the range in the parameter's scale."""
    if spec.scale_type == ScaleType.UNIT_LOG_SCALE and low > 0:
        return math.exp(math.log(low) + u * (math.log(high) - math.log(low)))
    if spec.scale_type == ScaleType.UNIT_REVERSE_LOG_SCALE and low > 0:
        return high + low - math.exp(math.log(low) + (1 - u) * (math.log(high) - math.log(low)))
    return low + u * (high - low)


def _fraction(spec: Any, low: float, high: float, value: float) -> float:
    """The inverse of ``_scaled``."""
    if high == low:
        return 0.0
    if spec.scale_type == ScaleType.UNIT_LOG_SCALE and low > 0 and value > 0:
        return (math.log(value) - math.log(low)) / (math.log(high) - math.log(low))
    if spec.scale_type == ScaleType.UNIT_REVERSE_LOG_SCALE and low > 0:
        mirrored = max(high + low - value, low)
        return 1 - (math.log(mirrored) - math.log(low)) / (math.log(high) - math.log(low))
    return (value - low) / (high - low)


def _choices(spec: Any) -> list[Any] | None:
    kind = spec.WhichOneof("parameter_value_spec")
    if kind == "discrete_value_spec":
        return list(spec.discrete_value_spec.values)
    if kind == "categorical_value_spec":
        return list(spec.categorical_value_spec.values)
    if kind == "integer_value_spec":
        return list(range(spec.integer_value_spec.min_value,
                          spec.integer_value_spec.max_value + 1))
    return None


def _draw(spec: Any, rng: random.Random, near: Any = None) -> Any:
    kind = spec.WhichOneof("parameter_value_spec")
    if kind in ("double_value_spec", "integer_value_spec"):
        bounds = getattr(spec, kind)
        low, high = float(bounds.min_value), float(bounds.max_value)
        if near is None:
            u = rng.random()
        else:
            u = min(1.0, max(0.0, _fraction(spec, low, high, float(near))
                             + rng.gauss(0.0, NEAR_SPREAD)))
        value = _scaled(spec, low, high, u)
        if kind == "integer_value_spec":
            return int(min(high, max(low, round(value))))
        return value
    choices = _choices(spec) or [None]
    if near is not None and near in choices and rng.random() < KEEP_CHOICE:
        return near
    return rng.choice(choices)


def _enabled(child: Any, parent_value: Any) -> bool:
    which = child.WhichOneof("parent_value_condition")
    if which is None:
        return False
    return parent_value in list(getattr(child, which).values)


def _sample(specs: Any, rng: random.Random, best: Values | None, out: Values) -> None:
    for spec in specs:
        value = _draw(spec, rng, None if best is None else best.get(spec.parameter_id))
        out[spec.parameter_id] = value
        for child in spec.conditional_parameter_specs:
            if _enabled(child, value):
                _sample([child.parameter_spec], rng, best, out)


def grid_points(specs: Any) -> list[Values]:
    """Every point of the grid, conditional parameters expanded under the values they need."""
    points: list[Values] = [{}]
    for spec in specs:
        choices = _choices(spec) or []
        extended = []
        for point, value in itertools.product(points, choices):
            below: list[Values] = [{spec.parameter_id: value}]
            for child in spec.conditional_parameter_specs:
                if _enabled(child, value):
                    below = [{**b, **c} for b in below
                             for c in grid_points([child.parameter_spec])]
            extended += [{**point, **b} for b in below]
        points = extended
    return points


def suggest(study: Any, job_id: str, trial: int, best: Values | None) -> Values | None:
    """The parameters of trial number ``trial`` (1-based); None when the study has no more
    points (a grid that ran out). ``best``: the best finished trial's parameters, if any."""
    rng = rng_for(job_id, trial)
    if study.algorithm == Algorithm.GRID_SEARCH:
        points = grid_points(study.parameters)
        return points[trial - 1] if trial <= len(points) else None
    out: Values = {}
    near = best if study.algorithm == Algorithm.ALGORITHM_UNSPECIFIED and \
        trial > EXPLORE_TRIALS else None
    _sample(study.parameters, rng, near, out)
    return out


def flag_value(value: Any) -> str:
    """How a value is written after ``--name=``: integers without a decimal point."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)
