"""A trial's intermediate measurements as the sweep page shows them: the objective's values by
step as a small SVG polyline (drawn on the server, so the page needs no script for it), and the
measurements as a step -> metrics list."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

WIDTH, HEIGHT, PAD = 120.0, 28.0, 2.0
MAX_LISTED = 100  # Vertex keeps at most this many per trial with cloudml-hypertune's file


@dataclass(frozen=True)
class Curve:
    points: str                           # "x,y x,y ...": the polyline, numbers only
    listed: list[tuple[int, list[tuple[str, float]]]]   # step, [(metric, value)]
    first: float | None                   # the objective's first and last values
    last: float | None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _step(measurement: dict[str, Any]) -> int | None:
    step = measurement.get("step")
    return step if isinstance(step, int) and not isinstance(step, bool) and step >= 0 else None


def points(series: list[tuple[int, float]]) -> str:
    """The polyline of (step, value) pairs scaled into the WIDTH x HEIGHT box; a higher value
    is drawn higher. One point is drawn as a short flat line."""
    if not series:
        return ""
    steps = [s for s, _ in series]
    values = [v for _, v in series]
    low_s, high_s = min(steps), max(steps)
    low_v, high_v = min(values), max(values)

    def x(step: int) -> float:
        if high_s == low_s:
            return WIDTH / 2
        return PAD + (step - low_s) / (high_s - low_s) * (WIDTH - 2 * PAD)

    def y(value: float) -> float:
        if high_v == low_v:
            return HEIGHT / 2
        return HEIGHT - PAD - (value - low_v) / (high_v - low_v) * (HEIGHT - 2 * PAD)

    drawn = [(x(s), y(v)) for s, v in series]
    if len(drawn) == 1:
        drawn = [(PAD, drawn[0][1]), (WIDTH - PAD, drawn[0][1])]
    return " ".join(f"{px:.1f},{py:.1f}" for px, py in drawn)


def curve(measurements: Any, metric_id: str) -> Curve:
    """What the page draws of one trial's measurements ([{"step", "metrics"}], as stored);
    anything malformed in them is left out."""
    listed: list[tuple[int, list[tuple[str, float]]]] = []
    series: list[tuple[int, float]] = []
    for measurement in measurements if isinstance(measurements, list) else []:
        if not isinstance(measurement, dict):
            continue
        step, metrics = _step(measurement), measurement.get("metrics")
        if step is None or not isinstance(metrics, dict):
            continue
        numbers = [(str(name), _number(value)) for name, value in metrics.items()]
        values = [(name, value) for name, value in numbers if value is not None]
        if not values:
            continue
        listed.append((step, values))
        objective = _number(metrics.get(metric_id))
        if objective is not None:
            series.append((step, objective))
    return Curve(points=points(series), listed=listed[-MAX_LISTED:],
                 first=series[0][1] if series else None,
                 last=series[-1][1] if series else None)
