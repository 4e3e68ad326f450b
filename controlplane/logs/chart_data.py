"""What the job page's charts are handed beyond the raw series, decided here so the page's
script only draws: the compile steps left out of the step-time and throughput charts, the
labels of the run's markers laid out so that none covers another, and a colour for each line.

Pure functions over the rows metrics.json sends (controlplane/logs/views.py).
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from controlplane.core.palette import colors

__all__ = ["colors", "compile_steps", "eval_names", "leave_out_compile_steps",
           "marker_labels"]

# A run's first step (a TPU's XLA compile, torch.compile's first graph) can take a minute where
# the others take a fraction of a second: on the same axis every steady step sits on the floor.
# A leading step slower than this many times the median of the steady steps after it is a
# compile step: left out of the charts it flattens, and named beside them.
COMPILE_FACTOR = 5.0
# At most this many leading steps of an attempt count as compiling (XLA compiles the first
# step's graph and, often, the second's); judged only with this many steady steps after them.
MAX_COMPILE_STEPS = 3
MIN_STEADY_STEPS = 3
# The series a compile step distorts: its own time, and the throughput measured over it.
COMPILE_SERIES = ("step_time_s", "tokens_per_s", "mfu")

# Marker labels closer than this share of the x axis would print over each other: the later
# one goes one lane lower (LANES lanes, then back to the top).
LABEL_GAP = 0.06
LANES = 3
LABELS = {"preempted": "preempted", "replica_restarted": "restart", "resumed": "resumed"}

def compile_steps(steps: Sequence[int], attempts: Sequence[int],
                  step_times: Sequence[float | None]) -> list[int]:
    """The row indexes of compile steps: per attempt, the leading rows (up to
    MAX_COMPILE_STEPS) each slower than COMPILE_FACTOR x the median step time of the rows
    after them. An attempt with too few steady rows yet is left as it is."""
    by_attempt: dict[int, list[int]] = {}
    for index, attempt in enumerate(attempts):
        if step_times[index] is not None:
            by_attempt.setdefault(attempt, []).append(index)
    found = []
    for rows in by_attempt.values():
        rows.sort(key=lambda i: steps[i])
        for lead, index in enumerate(rows[:MAX_COMPILE_STEPS]):
            steady = [step_times[i] for i in rows[lead + 1:]]
            if len(steady) < MIN_STEADY_STEPS:
                break
            median = statistics.median(t for t in steady if t is not None)
            if not median or (step_times[index] or 0) <= COMPILE_FACTOR * median:
                break
            found.append(index)
    return sorted(found)


def leave_out_compile_steps(body: dict[str, Any]) -> None:
    """Takes the compile steps out of the series they distort (null there) and lists them
    in body["compile_steps"] with their time, for the chart's note."""
    indexes = compile_steps(body["steps"], body["attempt"], body["step_time_s"])
    body["compile_steps"] = [{"attempt": body["attempt"][i], "step": body["steps"][i],
                              "step_time_s": body["step_time_s"][i]} for i in indexes]
    for name in COMPILE_SERIES:
        values = body.get(name)
        if values:
            for i in indexes:
                values[i] = None


def marker_labels(markers: Sequence[Mapping[str, Any]], steps: Sequence[int]
                  ) -> list[dict[str, Any]]:
    """One label per step with markers (the kinds at one step joined: "preempted, restart"),
    each with a lane (0 at the top) so that labels closer than LABEL_GAP of the step axis sit
    on different lanes."""
    at: dict[int, dict[str, Any]] = {}
    for marker in markers:
        step = marker.get("step")
        if step is None:
            continue
        label = at.setdefault(step, {"step": step, "t": marker.get("t"), "kinds": []})
        kind = str(marker.get("kind"))
        if kind not in label["kinds"]:
            label["kinds"].append(kind)
    known = [s for s in steps if s is not None] + list(at)
    span = (max(known) - min(known)) if known else 0
    out: list[dict[str, Any]] = []
    for step in sorted(at):
        label = at[step]
        lane = 0
        if out and span and (step - out[-1]["step"]) < LABEL_GAP * span:
            lane = (out[-1]["lane"] + 1) % LANES
        out.append({"step": step, "t": label["t"], "lane": lane, "kinds": label["kinds"],
                    "text": ", ".join(LABELS.get(k, k) for k in label["kinds"])})
    return out


def eval_names(evals: Sequence[Mapping[str, Any]]) -> list[str]:
    """The eval metrics drawn on the loss chart, first seen first: losses only (a perplexity
    or an accuracy on the loss axis would flatten the curves)."""
    names: list[str] = []
    for row in evals:
        for name in row.get("metrics") or {}:
            if "loss" in name.lower() and name not in names:
                names.append(name)
    return names
