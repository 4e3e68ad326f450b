"""The events a trainer prints: one JSON object per line on stdout, with `event` naming it.

Cloud Logging turns each line into a jsonPayload (and lifts `severity` and `message`); the
control plane reads the fields below (DESIGN.md, "Contract between trainers and the control
plane"; the /docs/own-code/ page shows them to teams). What a field is required for is
what the control plane cannot do without: a `step` line without `step` draws nothing, a
`checkpoint_saved` without `path` lists nothing to resume from. Every other field is optional,
and fields the contract does not name are allowed: user code may print more than it must.

A record is judged as printed or as read back from Cloud Logging, where every JSON number has
passed through a protobuf Struct and arrives as a float: an integer field takes 5 or 5.0.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

# --- names ---------------------------------------------------------------------------------

# The events the control plane acts on.
RUN_STARTED = "run_started"
STEP = "step"
EVAL = "eval"
CHECKPOINT_SAVED = "checkpoint_saved"
CHECKPOINT_DELETED = "checkpoint_deleted"
RESUMED = "resumed"
PREEMPTED = "preempted"
TRACKING = "tracking"
RUN_FINISHED = "run_finished"
ERROR = "error"
# A span of a run that is not a training step (goodput: where the accelerator time went).
PHASE = "phase"
# Events the project's trainers and server print that the control plane keeps as log lines.
PAUSED = "paused"
CHECKPOINT_DISCARDED = "checkpoint_discarded"
DATA_CHANGED = "data_changed"
TRACKING_FAILED = "tracking_failed"
NOT_A_TRAINER = "not_a_trainer"
LAUNCHING = "launching"
HOSTS = "hosts"
SERVING_STARTED = "serving_started"
SERVING_STOPPED = "serving_stopped"
SERVING_FAILED = "serving_failed"
SERVING_RUNTIME = "serving_runtime"

# Not a JSON line: Vertex (and the emulator) write a text line starting with this when they
# restart a replica, and the control plane reads it as this event (a new run of the replica).
REPLICA_RESTARTED = "replica_restarted"
RESTART_PREFIX = "Restarting replica"

# The events that become entries of a job's timeline.
TIMELINE_EVENTS = frozenset({
    RUN_STARTED, CHECKPOINT_SAVED, CHECKPOINT_DELETED, RESUMED, PREEMPTED, EVAL, RUN_FINISHED,
    PHASE,
})
# The measurements of a `step` line, each drawn on its own chart.
STEP_VALUES = ("loss", "lr", "tokens_per_s", "step_time_s")
# Where a `tracking` event may say the run is tracked.
TRACKING_PROVIDERS = frozenset({"wandb", "vertex_experiments", "tensorboard"})
# What a `phase` event may name: the time a run spent on something other than steps
# (vertexplan/goodput.py counts each apart from productive step time).
PHASES = ("data_wait", "checkpoint_save", "restore", "compile", "eval")
# Cloud Logging's LogSeverity names, as a line's `severity` gives them.
SEVERITIES = ("DEFAULT", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL", "ALERT",
              "EMERGENCY")
# The fields the control plane reads as integers whatever event carries them (a Struct hands
# them back as floats).
READ_AS_INTEGERS = ("step", "total_steps", "rank", "world_size", "resumed_from_step", "bytes",
                    "params", "n_layer", "n_head", "d_model", "seq_len")


# --- the kinds of value ----------------------------------------------------------------------

def _number(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


def _integer(value: Any) -> bool:
    return _number(value) and (isinstance(value, int) or value.is_integer())


def _count(value: Any) -> bool:
    return _integer(value) and value >= 0


@dataclass(frozen=True)
class Kind:
    said: str                          # how a message names it: "an integer"
    accepts: Callable[[Any], bool]


@dataclass(frozen=True)
class MapOf:
    """An object whose keys are names and whose values are each of one kind."""

    said: str
    value: Kind
    nullable_values: bool = False

    def accepts(self, value: Any) -> bool:
        return isinstance(value, dict)


COUNT = Kind("an integer of 0 or more", _count)
NUMBER = Kind("a finite number", _number)
SECONDS = Kind("a finite number of 0 or more", lambda v: _number(v) and v >= 0)
# One value per rank, rank 0 first (the `step` event's per-rank step times).
PER_RANK_SECONDS = Kind("an array of finite numbers of 0 or more, one per rank",
                        lambda v: isinstance(v, list) and bool(v)
                        and all(_number(x) and x >= 0 for x in v))
TEXT = Kind("a string", lambda v: isinstance(v, str))
FLAG = Kind("true or false", lambda v: isinstance(v, bool))
DEGREES = MapOf("an object of degrees (axis: integer)", COUNT)
METRICS = MapOf("an object of metrics (name: number)", NUMBER, nullable_values=True)
OBJECT = Kind("an object", lambda v: isinstance(v, dict))


@dataclass(frozen=True)
class Field:
    name: str
    kind: Kind | MapOf
    required: bool = False
    nullable: bool = False             # null allowed (trainers print NaN and inf as null)
    choices: tuple[str, ...] = ()
    # A path in the job's storage: accepted only under the job's own output prefix, so no
    # event can make a checkpoint list, a resubmission or a model point at another team's files.
    path: bool = False


@dataclass(frozen=True)
class Event:
    name: str
    fields: tuple[Field, ...]
    drives: str                        # what the control plane does with it ("" if kept only)

    @property
    def read(self) -> bool:
        """Whether the control plane acts on it (else it is only kept as a log line)."""
        return bool(self.drives)

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.required)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.path)


# Every line may carry these.
COMMON = (
    Field("severity", TEXT, choices=SEVERITIES),
    Field("message", TEXT),
)

_SHAPE = tuple(Field(name, COUNT) for name in ("n_layer", "n_head", "d_model", "seq_len"))

EVENTS: Mapping[str, Event] = MappingProxyType({e.name: e for e in (
    Event(RUN_STARTED, (
        Field("rank", COUNT, required=True),
        Field("world_size", COUNT),
        Field("strategy", TEXT),
        # Who prints the events where not the product's trainers ("vcp-callbacks": a team's own
        # loop with callbacks/vcp_callbacks; its framework's own lines are then not read).
        Field("reporter", TEXT),
        Field("dims", DEGREES),        # {dp, tp, pp}, or the mesh's axes ({data, fsdp, tensor})
        Field("params", COUNT),
        Field("resumed_from_step", COUNT, nullable=True),
        Field("resumed_from", TEXT, nullable=True, path=True),
        Field("resume_path", TEXT, nullable=True, path=True),
        *_SHAPE,
        Field("precision", TEXT),
        Field("devices", COUNT),
        Field("sharded_parameters", COUNT),
    ), "a new run of the replica: the timeline, restart detection; rank 0's with params and "
       "the shape: the MFU chart"),
    Event(STEP, (
        Field("step", COUNT, required=True),
        Field("total_steps", COUNT),
        Field("loss", NUMBER, nullable=True),   # the mean over data-parallel ranks
        Field("lr", NUMBER, nullable=True),
        Field("tokens_per_s", NUMBER, nullable=True),
        Field("samples_per_s", NUMBER, nullable=True),  # read when tokens_per_s is missing
        Field("step_time_s", NUMBER, nullable=True),
        # Every few steps: each rank's own time in the step (outside the waits for the
        # others), index = rank: a rank persistently slower than the rest is named a straggler.
        Field("rank_step_time_s", PER_RANK_SECONDS),
    ), "progress, ETA, the loss, learning-rate, throughput and step-time charts; per-rank "
       "step times: straggler detection"),
    Event(EVAL, (
        Field("step", COUNT, required=True),
        Field("metrics", METRICS, required=True),
    ), "eval lines on the loss chart"),
    Event(CHECKPOINT_SAVED, (
        Field("step", COUNT, required=True),
        Field("path", TEXT, required=True, path=True),  # gs://, /gcs/ or a local stand-in
        Field("bytes", COUNT),
        Field("seconds", NUMBER),
    ), "the checkpoint list; what recovery resumes from"),
    Event(PHASE, (
        Field("phase", TEXT, required=True, choices=PHASES),
        Field("seconds", SECONDS, required=True),   # how long the phase took, ending now
        Field("step", COUNT),                       # the step it happened at or before
        Field("rank", COUNT),
        # true: the phase starts now (seconds 0) and the event that ends it follows; until
        # then an eval or checkpoint_save phase is quiet on purpose, not a hang.
        Field("begins", FLAG),
    ), "goodput: the phase's time counted apart from productive steps; a job in eval or "
       "checkpoint_save is not suspected of hanging"),
    Event(CHECKPOINT_DELETED, (
        Field("step", COUNT, nullable=True),    # null: a folder whose step cannot be read
        Field("path", TEXT, required=True, path=True),
    ), "rotation: the checkpoint leaves the list"),
    Event(RESUMED, (
        Field("step", COUNT, required=True),
        Field("path", TEXT, required=True, path=True),
    ), "a resume marker; the step a restarted run went back to"),
    Event(PREEMPTED, (
        Field("step", COUNT, required=True),
        Field("signal", TEXT),
        Field("checkpoint_path", TEXT, nullable=True, path=True),
    ), "a preemption marker; lost compute in the cost"),
    Event(TRACKING, (
        Field("provider", TEXT, required=True, choices=tuple(sorted(TRACKING_PROVIDERS))),
        Field("run_url", TEXT, required=True),  # "" when no URL can be given yet
        Field("run_id", TEXT),
        Field("run_dir", TEXT),
        Field("offline", FLAG),
    ), "a link to the run on the job page (http(s) URLs only)"),
    Event(RUN_FINISHED, (
        Field("step", COUNT, required=True),
        Field("final_loss", NUMBER, nullable=True),
        Field("wall_s", NUMBER),
        Field("model_path", TEXT, nullable=True, path=True),
        Field("path", TEXT, nullable=True, path=True),
    ), "the end of the timeline"),
    Event(ERROR, (
        Field("message", TEXT, required=True),  # what failure diagnosis reads
        Field("rank", COUNT, nullable=True),
        Field("error_type", TEXT),
    ), "failure diagnosis"),
    Event(PAUSED, (
        Field("point", TEXT), Field("step", COUNT), Field("path", TEXT, nullable=True),
        Field("rank", COUNT),
    ), ""),
    Event(CHECKPOINT_DISCARDED, (Field("path", TEXT),), ""),
    # rank: a streamed run's position is each rank's own, and so is its starting over.
    Event(DATA_CHANGED, (Field("checkpoint", OBJECT), Field("current", OBJECT),
                         Field("rank", COUNT)), ""),
    Event(TRACKING_FAILED, (Field("provider", TEXT),), ""),
    Event(NOT_A_TRAINER, (Field("task_type", TEXT),), ""),
    Event(LAUNCHING, (Field("nproc_per_node", COUNT),), ""),
    Event(HOSTS, (
        Field("source", TEXT), Field("coordinator", TEXT, nullable=True),
        Field("num_processes", COUNT), Field("process_id", COUNT),
    ), ""),
    Event(SERVING_STARTED, (
        Field("port", COUNT), Field("model", TEXT), Field("step", COUNT, nullable=True),
        Field("params", COUNT), Field("device", TEXT), Field("runtime", TEXT),
        Field("warmup_s", NUMBER), Field("compiled_at_start", FLAG), Field("max_batch", COUNT),
        Field("health_route", TEXT), Field("predict_route", TEXT),
        # Whether generation keeps each sequence's keys and values (off: --no-kv-cache).
        Field("kv_cache", FLAG),
    ), ""),
    Event(SERVING_STOPPED, (
        Field("instances", COUNT), Field("batches", COUNT), Field("largest_batch", COUNT),
        Field("wall_s", NUMBER),
    ), ""),
    Event(SERVING_FAILED, (), ""),
    Event(SERVING_RUNTIME, (Field("runtime", TEXT),), ""),
)})


# The events the control plane acts on that name paths, and the fields that hold them.
PATH_FIELDS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    e.name: e.paths for e in EVENTS.values() if e.read and e.paths})


# --- the validator -----------------------------------------------------------------------------

def validate(record: Any) -> list[str]:
    """What is wrong with one event record (a parsed JSON line), each problem naming its
    field; [] when the control plane can read it as the contract says."""
    if not isinstance(record, dict):
        return [f"an event is a JSON object, got {_json_type(record)}"]
    if "event" not in record:
        return ["event is required: the name of the event (e.g. \"step\")"]
    name = record["event"]
    if not isinstance(name, str) or not name:
        return [f"event must be a non-empty string, got {_shown(name)}"]
    event = EVENTS.get(name)
    if event is None:
        return [f"event {_short(name)} is not one of the contract's: "
                f"{', '.join(sorted(EVENTS))}"]
    fields = {f.name: f for f in COMMON} | {f.name: f for f in event.fields}
    problems = []
    for field in fields.values():
        if field.name not in record:
            if field.required:
                problems.append(f"{name}: {field.name} is required")
            continue
        problem = _problem(field, record[field.name])
        if problem:
            # metrics['val_loss'] must be ...: a value inside an object is named by its key.
            space = "" if problem.startswith("[") else " "
            problems.append(f"{name}: {field.name}{space}{problem}")
    return problems


def validate_line(line: str) -> list[str]:
    """validate() of one printed line, which must be one JSON object."""
    try:
        record = json.loads(line)
    except ValueError as exc:
        return [f"not a JSON line: {exc}"]
    return validate(record)


def _problem(field: Field, value: Any) -> str | None:
    kind = field.kind
    if value is None:
        return None if field.nullable else f"must be {kind.said}, got null"
    if not kind.accepts(value):
        said = kind.said + (" or null" if field.nullable else "")
        return f"must be {said}, got {_shown(value)}"
    if field.choices and value not in field.choices:
        return f"must be one of {', '.join(field.choices)}, got {_short(value)}"
    if isinstance(kind, MapOf):
        for key, item in value.items():
            if item is None and kind.nullable_values:
                continue
            if not kind.value.accepts(item):
                said = kind.value.said + (" or null" if kind.nullable_values else "")
                return f"[{_short(key)}] must be {said}, got {_shown(item)}"
    return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


def _short(value: Any, limit: int = 40) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _shown(value: Any) -> str:
    if isinstance(value, dict | list | tuple):
        return _json_type(value)
    return f"{_short(value)} ({_json_type(value)})"
