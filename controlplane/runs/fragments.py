"""The pages' hot fragments, drawn by Jinja2: the job list's rows, the job page's timeline and
checkpoint rows (runs/jinja2/runs/fragments/), the log panel's lines (logs/jinja2/logs/fragments/).

Each is redrawn every few seconds while a job runs, and through Django's template engine they
cost more than the rest of their page together: about 350 us a job-list row (forty lookups,
filters and an include), 150 a timeline item, 130 a log line. Jinja2 compiles a template to a
Python function: the markup lives in a template at a fraction of that (bench/page_fragments.py
times them). The environment (TEMPLATES' second entry) writes every `{{ value }}` as Django's engine
does, localized and then escaped (`written`), so a fragment reads as the Django template that
places it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from datetime import datetime, tzinfo
from typing import Any

import jinja2
from django.conf import settings
from django.template import engines
from django.template.defaultfilters import date as date_filter
from django.template.defaultfilters import filesizeformat, floatformat, truncatechars
from django.urls import reverse
from django.utils import timezone
from django.utils.formats import localize
from django.utils.html import conditional_escape
from django.utils.safestring import SafeString, mark_safe
from markupsafe import Markup

from controlplane.runs import uris
from vertexplan import summaries
from vertexplan.pricing import display_usd

# Django's `date` formats that the pages use, as strftime formats: Django's formatter reads its
# format letter by letter through a class per value (about 20 us each), and a job page writes
# some sixty moments, the job list a hundred and fifty.
MOMENT_FORMATS = {"m-d H:i:s": "%m-%d %H:%M:%S", "m-d H:i": "%m-%d %H:%M",
                  "Y-m-d H:i": "%Y-%m-%d %H:%M", "Y-m-d H:i:s": "%Y-%m-%d %H:%M:%S",
                  "m-d H:i:s.u": "%m-%d %H:%M:%S.%f"}
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


def render(name: str, **context: Any) -> SafeString:
    """The fragment `name` with `zone`, the reader's time zone, asked once for all its values
    (a context-local lookup per value cost more than writing it)."""
    context["zone"] = timezone.get_current_timezone()
    # Every value was escaped by the environment as it was written.
    return mark_safe(engines["jinja2"].get_template(name).render(context))


def environment(**options: Any) -> jinja2.Environment:
    # A missing variable or key is written as empty, as Django's engine writes it (Django's
    # backend would write it as its own source under DEBUG).
    options["undefined"] = jinja2.Undefined
    env = jinja2.Environment(finalize=written, **options)
    env.globals.update(url=url, recovery_kinds=RECOVERY_KINDS)
    env.filters.update(
        localtime=localtime, moment=moment, floatformat=floatformat,
        truncatechars=truncatechars, filesizeformat=filesizeformat, state_class=state_class,
        usd=display_usd, running_time=running_time, progress=progress,
        accelerators=summaries.accelerator_summary,
        severity_class=summaries.severity_class, severity_name=summaries.severity_name,
        mesh_axes=mesh_axes, extra_fields=extra_fields, storage_uri=uris.storage_uri)
    env.tests.update(present=present, list=lambda value: isinstance(value, list | tuple))
    return env


def written(value: Any) -> Any:
    """`{{ value }}` as Django's engine writes it: localized, then escaped; a safe string as it
    is. Jinja2 escapes what this returns unless it is safe, as Django does but for quotes
    (&#34; and &#39; where Django writes &quot; and &#x27;): a string with quotes is escaped
    here, by the standard library's escape (Django's is that call in a wrapper costing three
    times as much), and one without is left to Jinja2's escape: the same text, one safe string
    built instead of two."""
    if type(value) is str:
        if '"' in value or "'" in value:
            return Markup(html.escape(value))
        return value
    if type(value) is int and not settings.USE_THOUSAND_SEPARATOR:
        return value  # what localize() makes of it, without its lookups
    if hasattr(value, "__html__") or isinstance(value, jinja2.Undefined):
        return value
    return Markup(conditional_escape(localize(value)))


def present(value: Any) -> bool:
    """`is present`: neither missing nor None (an event's optional field)."""
    return value is not None and not isinstance(value, jinja2.Undefined)


def url(name: str, *args: Any) -> str:
    return reverse(name, args=args)


def localtime(value: datetime | None, zone: tzinfo) -> datetime | None:
    return None if value is None else value.astimezone(zone)


def moment(value: Any, arg: str = "c") -> str:
    """As Django's `date` filter of a time already in the reader's zone ('' for no value), for
    'c' (ISO 8601) and the formats of MOMENT_FORMATS; any other format goes to `date` itself."""
    if value in (None, ""):
        return ""
    if arg == "c":
        return str(value.isoformat())
    strftime = MOMENT_FORMATS.get(arg)
    if strftime is None:
        return str(date_filter(value, arg))
    return str(value.strftime(strftime))


def state_class(state: Any) -> str:
    return f"state-{str(state or '').lower()}"


def progress(job: Any) -> int | None:
    """The share of its steps a job has done, in percent; None before it reports any."""
    return summaries.progress_percent(job.last_step, job.total_steps)


def running_time(job: Any, now: datetime) -> str:
    """Started to ended, or to now while it runs (never below nothing: clocks disagree); a
    dash before it starts."""
    if job.started_at is None:
        return "\N{EN DASH}"
    end = job.ended_at or now
    return summaries.duration_text(max((end - job.started_at).total_seconds(), 0))


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
