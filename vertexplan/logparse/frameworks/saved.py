"""A task's recognizer state as JSON and back: what the log store keeps between pages.

The follower stores a job's lines page by page, in any worker, across restarts; a recognizer
that counts (the HF Trainer's loss lines, the interval its checkpoints narrow) must go on from
where the last page left it. The states are small dataclasses of numbers, strings and
fractions; they are written as plain JSON (never pickled: what is read back from the database
is data, not code) and read back field by field into each recognizer's own State, so a field
the saved form lacks keeps its default and one it has that the State lacks is dropped.
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

from vertexplan.logparse.frameworks.registry import FRAMEWORKS, RECOGNIZERS, JobState

_FRACTION = "fraction"


def _encode(value: object) -> object:
    if isinstance(value, Fraction):
        return {_FRACTION: [value.numerator, value.denominator]}
    return value


def _decode(value: object, default: object) -> object:
    if isinstance(value, dict) and set(value) == {_FRACTION}:
        pair = value[_FRACTION]
        if (isinstance(pair, list) and len(pair) == 2 and all(type(n) is int for n in pair)
                and pair[1] > 0):
            return Fraction(pair[0], pair[1])
        return default
    # A plain value of the default's kind is taken (an int where a float or a fraction may
    # be, anything where the default is None); a value of another kind is not.
    fits = value is None or default is None or type(value) is type(default) or (
        type(value) is int and isinstance(default, (float, Fraction)))
    return value if fits and isinstance(value, (type(None), bool, int, float, str)) \
        else default


def to_json(job: JobState) -> dict[str, Any]:
    return {"framework": job.framework,
            "states": {name: {f.name: _encode(getattr(state, f.name))
                              for f in dataclasses.fields(state)}
                       for name, state in job.states.items()}}


def from_json(saved: object) -> JobState:
    """The JobState a to_json() wrote; anything unreadable in it starts afresh."""
    if not isinstance(saved, dict):
        return JobState()
    framework = saved.get("framework")
    job = JobState(framework=framework if framework in FRAMEWORKS else None)
    states = saved.get("states")
    if not isinstance(states, dict):
        return job
    for name, fields in states.items():
        if name not in RECOGNIZERS or not isinstance(fields, dict):
            continue
        state = job.of(name)
        for f in dataclasses.fields(state):
            if f.name in fields:
                default = getattr(state, f.name)
                setattr(state, f.name, _decode(fields[f.name], default))
    return job
