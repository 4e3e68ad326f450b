"""The job page's timeline items and checkpoint rows, written in Python.

Through the template engine (an include per item, a dozen branches on the event's kind) each
item cost about 150 us, and the timeline is redrawn every 3 s while a job runs; here it costs a
few. Every value is written as the engine writes `{{ value }}`: localized, then escaped. A field
the event does not have reads as the engine's missing variable does: empty, and None in a test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import tzinfo
from typing import Any

from django.template.defaultfilters import filesizeformat, floatformat, truncatechars

from controlplane.runs.checkpoints import Checkpoint
from controlplane.runs.html_values import reader_zone
from controlplane.runs.html_values import value_html as _v
from controlplane.runs.models import JobEvent, JobRestart

# Event data keys a timeline entry already shows in its own words; the rest are listed.
SHOWN_KEYS = frozenset({"step", "path", "bytes", "seconds", "from", "to", "error", "source"})
# The mesh axes the trainers report in run_started, in the order each names them: PyTorch's
# (data, tensor, pipeline) degrees and the JAX trainer's (data, fsdp, tensor) mesh. The database
# keeps JSON objects with their keys reordered, so the order comes from here; an axis outside
# both lists (another trainer's) follows, by name.
AXIS_ORDER = ("dp", "tp", "pp", "data", "fsdp", "tensor")
MOST_AXES = 8
# Events the timeline draws as the restart records are drawn (a step of the job's recovery).
RECOVERY_KINDS = frozenset({"checkpoint_saved", "recovery", "recovery_refused", "submitted"})
NOTHING = "&ndash;"  # a checkpoint's size or seconds it did not report


def _moments(at: Any, zone: tzinfo) -> tuple[str, str]:
    """(ISO 8601, "m-d H:i:s") of a time in `zone`; ("", "") for none."""
    if at is None:
        return "", ""
    local = at.astimezone(zone)
    return local.isoformat(), local.strftime("%m-%d %H:%M:%S")


def _time(at: Any, zone: tzinfo) -> str:
    iso, short = _moments(at, zone)
    return f'<time class="time" datetime="{_v(iso)}">{short}</time>'


def _step_of(event: JobEvent, data: Mapping[str, Any]) -> str:
    """`event.data.step|default:event.step`."""
    return _v(data.get("step") or event.step)


def _replica(replica: str) -> str:
    return f'<span class="replica mono small">{_v(replica)}</span>' if replica else ""


def extra_fields(data: Mapping[str, Any] | None) -> list[tuple[str, Any]]:
    """The fields of an event's data that its timeline line does not already show."""
    return sorted((k, v) for k, v in (data or {}).items() if k not in SHOWN_KEYS)


def mesh_axes(dims: Any) -> list[tuple[str, str]]:
    """(axis, degree) of the mesh a run reported, e.g. [("data", "2"), ("fsdp", "2"),
    ("tensor", "2")]; [] when the event has none (or not an object)."""
    if not isinstance(dims, dict):
        return []
    known = [k for k in AXIS_ORDER if k in dims]
    rest = sorted(str(k) for k in dims if k not in AXIS_ORDER)
    return [(name, _degree(dims[name])) for name in [*known, *rest][:MOST_AXES]]


def _degree(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _fields(pairs: Iterable[tuple[Any, Any]]) -> str:
    return "".join(f'<span class="mono small">{_v(k)}={_v(v)}</span> ' for k, v in pairs)


def _checkpoint_saved(event: JobEvent, data: Mapping[str, Any]) -> str:
    text = (f'<span class="kind">checkpoint</span> step {_step_of(event, data)} '
            f'<span class="mono small">{_v(data.get("path", ""))}</span>')
    size, seconds = _size(data), _seconds(data)
    if size is not None:
        text += f' <span class="muted">{size}</span>'
    if seconds is not None:
        text += f' <span class="muted">in {seconds} s</span>'
    return text


def _size(data: Mapping[str, Any]) -> str | None:
    """A checkpoint's size as written (1.0 MB), None when it did not report one."""
    return _v(filesizeformat(data["bytes"])) if data.get("bytes") is not None else None


def _seconds(data: Mapping[str, Any]) -> str | None:
    """The seconds a checkpoint took to save, to a tenth; None when not reported."""
    return _v(floatformat(data["seconds"], 1)) if data.get("seconds") is not None else None


def _state(event: JobEvent, data: Mapping[str, Any]) -> str:
    text = '<span class="kind">state</span> '
    if data.get("from"):
        text += (f'<span class="badge {_state_class(data["from"])}">{_v(data["from"])}</span> '
                 "&rarr; ")
    text += f'<span class="badge {_state_class(data.get("to"))}">{_v(data.get("to", ""))}</span>'
    if data.get("source"):
        text += f' <span class="muted small">({_v(data["source"])})</span>'
    if data.get("error"):
        style = "muted small" if data.get("to") == "CANCELLED" else "event-error"
        text += f' <div class="{style}">{_v(data["error"])}</div>'
    return text


def _state_class(state: Any) -> str:
    return _v(f"state-{str(state or '').lower()}")


def _run_started(event: JobEvent, data: Mapping[str, Any]) -> str:
    text = (f'<span class="kind">run started</span> rank {_v(data.get("rank", ""))}/'
            f'{_v(data.get("world_size", ""))}')
    if data.get("strategy"):
        text += f", {_v(data['strategy'])}"
    axes = mesh_axes(data.get("dims"))
    if axes:
        text += (' <span class="mono small dims" title="the parallel degrees over the mesh axes '
                 'the run reported">'
                 + " x ".join(f"{_v(name)} {_v(degree)}" for name, degree in axes) + "</span>")
    if data.get("resumed_from_step") is not None:
        text += f", resuming at step {_v(data['resumed_from_step'])}"
    return text


def _run_finished(event: JobEvent, data: Mapping[str, Any]) -> str:
    text = f'<span class="kind">run finished</span> at step {_step_of(event, data)}'
    if data.get("final_loss") is not None:
        text += f", loss {_v(floatformat(data['final_loss'], 4))}"
    if data.get("wall_s") is not None:
        text += f", {_v(floatformat(data['wall_s'], 0))} s"
    return text


def _preempted(event: JobEvent, data: Mapping[str, Any]) -> str:
    signal = f" ({_v(data['signal'])})" if data.get("signal") else ""
    step = data.get("step") or event.step
    text = (f'<span class="kind">preempted</span>{signal} at step '
            f'{_v("?" if step is None else step)}')
    if data.get("checkpoint_path"):
        text += (f' <span class="muted">saved</span> '
                 f'<span class="mono small">{_v(data["checkpoint_path"])}</span>')
    return text


def _event_what(event: JobEvent, data: Mapping[str, Any]) -> str:
    kind = event.kind
    if kind == "state":
        return _state(event, data)
    if kind == "checkpoint_saved":
        return _checkpoint_saved(event, data)
    if kind == "checkpoint_deleted":
        return (f'<span class="kind">checkpoint deleted</span> step {_step_of(event, data)} '
                f'<span class="muted small">(rotation)</span> '
                f'<span class="mono small">{_v(data.get("path", ""))}</span>')
    if kind == "resumed":
        return (f'<span class="kind">resumed</span> from step {_step_of(event, data)} '
                f'<span class="mono small">{_v(data.get("path", ""))}</span>')
    if kind == "preempted":
        return _preempted(event, data)
    if kind == "run_started":
        return _run_started(event, data)
    if kind == "run_finished":
        return _run_finished(event, data)
    if kind == "replica_restarted":
        return f'<span class="kind">replica restarted</span> {_v(data.get("text") or "")}'
    if kind == "eval":
        metrics = data.get("metrics")
        return (f'<span class="kind">eval</span> at step {_step_of(event, data)} '
                + _fields(metrics.items() if isinstance(metrics, dict) else ()))
    return f'<span class="kind">{_v(kind)}</span> ' + _fields(extra_fields(data))


def _recovery_what(event: JobEvent, data: Mapping[str, Any]) -> str:
    """What an event of the job's recovery says (RECOVERY_KINDS)."""
    kind = event.kind
    if kind == "checkpoint_saved":
        return _checkpoint_saved(event, data)
    if kind == "recovery":
        start = (f"from checkpoint step {_v(data['resume_step'])}"
                 if data.get("resume_step") is not None else "from the beginning")
        skipped = data.get("skipped")
        notes = "".join(f'<div class="muted small">skipped {_v(note)}</div>'
                        for note in (skipped if isinstance(skipped, list | tuple) else ()))
        return (f'<span class="kind">recovery</span> {_v(data.get("recovery", ""))} of '
                f'{_v(data.get("max", ""))}: attempt {_v(event.attempt)} on '
                f'{_v(data.get("scheduling", ""))} in {_v(data.get("region", ""))} {start}, '
                f'after {_v(data.get("delay_s", ""))} s '
                f'<div class="muted small">{_v(data.get("why", ""))}</div>{notes}')
    if kind == "recovery_refused":
        return f'<span class="kind">no recovery</span> {_v(data.get("why", ""))}'
    text = (f'<span class="kind">submitted</span> '
            f'<span class="mono small">{_v(data.get("vertex_name", ""))}</span>')
    if data.get("scheduling"):
        region = f" in {_v(data['region'])}" if data.get("region") else ""
        text += f' <span class="muted">{_v(data["scheduling"])}{region}</span>'
    if data.get("resume_step") is not None:
        text += (f' <span class="muted">resuming from step {_v(data["resume_step"])}</span> '
                 f'<span class="mono small">{_v(data.get("resume_path", ""))}</span>')
    return text


def event_item(event: JobEvent, zone: tzinfo | None = None) -> str:
    """One event's <li>; the recovery's own (RECOVERY_KINDS) carry an anchor a restart's
    checkpoint link points at."""
    data = event.data if isinstance(event.data, dict) else {}
    if event.kind in RECOVERY_KINDS:
        opening = f'<li class="event kind-{_v(event.kind)}" id="event-{event.pk}">'
        what = _recovery_what(event, data)
    else:
        opening = f'<li class="event kind-{_v(event.kind)}">'
        what = _event_what(event, data)
    return (f'{opening}{_time(event.timestamp, reader_zone(zone))} '
            f'<span class="attempt" title="attempt">a{_v(event.attempt)}</span> '
            f'<span class="what">{what}</span> {_replica(event.replica)}</li>')


def restart_item(restart: JobRestart, zone: tzinfo | None = None) -> str:
    """One restart record's <li>: its cause, where it stopped and what it resumed from."""
    what = f'<span class="kind">restart</span> {_v(restart.get_cause_display())}'
    if restart.step is not None:
        what += f" at step {_v(restart.step)}"
    if restart.resumed_from_step is not None:
        step = _v(restart.resumed_from_step)
        what += (f' &rarr; resumed from <a href="#event-{restart.checkpoint_id}">checkpoint step '
                 f'{step}</a>' if restart.checkpoint_id else
                 f" &rarr; resumed from checkpoint step {step}")
        if restart.steps_lost is not None:
            plural = "" if restart.steps_lost == 1 else "s"
            what += (f' <span class="muted">({_v(restart.steps_lost)} step{plural} '
                     f'lost)</span>')
    elif restart.resumed:
        what += " &rarr; restarted from the beginning"
    else:
        what += ' <span class="muted">&rarr; waiting to restart</span>'
    if restart.signal:
        what += f' <div class="muted small">{_v(truncatechars(restart.signal, 160))}</div>'
    return (f'<li class="event kind-preempted kind-restart" id="timeline-restart-{restart.pk}">'
            f'{_time(restart.occurred_at, reader_zone(zone))} '
            f'<span class="attempt" title="attempt">a{_v(restart.attempt)}</span> '
            f'<span class="what">{what}</span> {_replica(restart.replica)}</li>')


def timeline_items(items: Iterable[Mapping[str, Any]]) -> str:
    """The timeline's <li>s, newest first as given: {"restart": record} or {"event": event}."""
    zone = reader_zone(None)
    return "\n".join(restart_item(item["restart"], zone) if item.get("restart") is not None
                     else event_item(item["event"], zone) for item in items)


def checkpoint_row(checkpoint: Checkpoint, zone: tzinfo | None = None) -> str:
    data = checkpoint.data if isinstance(checkpoint.data, dict) else {}
    size, seconds = _size(data) or NOTHING, _seconds(data) or NOTHING
    iso, short = _moments(checkpoint.saved_at, reader_zone(zone))
    return (f'<tr><td class="num">{_v(checkpoint.step)}</td>'
            f'<td class="mono small path">{_v(checkpoint.path)}</td>'
            f'<td class="num">{size}</td><td class="num">{seconds}</td>'
            f'<td>{_v(checkpoint.attempt)}</td>'
            f'<td class="time" title="{_v(iso)}">{short}</td></tr>')


def checkpoint_rows(checkpoints: Iterable[Checkpoint]) -> str:
    zone = reader_zone(None)
    return "\n".join(checkpoint_row(c, zone) for c in checkpoints)
