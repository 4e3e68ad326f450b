"""Filters and tags the job pages use: state badges, pool summaries, severities, JSON."""

from __future__ import annotations

import json
from typing import Any

from django import template
from django.template.defaultfilters import date as date_filter
from django.template.defaulttags import querystring
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from controlplane.runs import job_rows_html, timeline_html
from controlplane.runs.checkpoints import Checkpoint
from controlplane.runs.models import ACTIVE_STATES
from controlplane.teams import access
from controlplane.teams.models import Membership
from vertexplan import summaries

register = template.Library()

# Django's `date` formats that the job pages use, as strftime formats: Django's formatter reads
# its format letter by letter through a class per value (about 20 us each), and a job page
# writes some sixty moments, the job list a hundred and fifty.
_MOMENT_FORMATS = {"m-d H:i:s": "%m-%d %H:%M:%S", "m-d H:i": "%m-%d %H:%M",
                   "Y-m-d H:i": "%Y-%m-%d %H:%M", "Y-m-d H:i:s": "%Y-%m-%d %H:%M:%S"}


@register.filter(expects_localtime=True)
def moment(value: Any, arg: str = "c") -> str:
    """As Django's `date` filter (in the current time zone; '' for no value), for 'c' (ISO
    8601) and the formats of _MOMENT_FORMATS; any other format goes to `date` itself."""
    if value in (None, ""):
        return ""
    if arg == "c":
        return str(value.isoformat())
    strftime = _MOMENT_FORMATS.get(arg)
    if strftime is None:
        return str(date_filter(value, arg))
    return str(value.strftime(strftime))


@register.filter
def state_class(state: str) -> str:
    return f"state-{(state or '').lower()}"


@register.filter
def is_active(state: str) -> bool:
    return state in ACTIVE_STATES


@register.filter
def accelerators(custom_job: dict[str, Any] | None) -> str:
    return summaries.accelerator_summary(custom_job)


@register.filter
def pools(custom_job: dict[str, Any] | None) -> list[summaries.PoolSummary]:
    return summaries.pool_summaries(custom_job)


@register.filter
def severity_class(severity: int | None) -> str:
    return summaries.severity_class(severity)


@register.filter
def severity_name(severity: int | None) -> str:
    return summaries.severity_name(severity)


@register.filter
def progress(job: Any) -> int | None:
    return summaries.progress_percent(job.last_step, job.total_steps)


@register.filter
def get_item(mapping: dict[str, Any] | None, key: str) -> Any:
    return (mapping or {}).get(key)


@register.filter
def pretty_json(value: Any) -> str:
    # Keep the order the composer wrote: it reads like Vertex's own documentation.
    return json.dumps(value, indent=2)


@register.simple_tag(takes_context=True)
def sort_header(context: Any, key: str, label: str, num: bool = False) -> SafeString:
    """A sortable column's header: its link sorts the list by the column, or the other way
    when the list already is (the view's `sort_next`), on the first page; `aria-sort` says how
    the list is sorted now."""
    sort = context.get("sort") or ""
    arrow, aria = "", ""
    if sort == key:
        arrow, aria = " \N{BLACK UP-POINTING TRIANGLE}", ' aria-sort="ascending"'
    elif sort[1:] == key and sort[:1] == "-":
        arrow, aria = " \N{BLACK DOWN-POINTING TRIANGLE}", ' aria-sort="descending"'
    link = querystring(context, sort=(context.get("sort_next") or {}).get(key), page=None)
    return format_html('<th{}{}><a class="sort" href="{}">{}{}</a></th>',
                       mark_safe(' class="num"' if num else ""), mark_safe(aria), link, label,
                       arrow)


@register.simple_tag
def job_rows(jobs: list[Any]) -> SafeString:
    return job_rows_html.job_rows(jobs)


@register.simple_tag
def timeline_items(items: list[dict[str, Any]]) -> SafeString:
    return mark_safe(timeline_html.timeline_items(items))  # every value escaped there


@register.simple_tag
def checkpoint_rows(checkpoints: list[Checkpoint]) -> SafeString:
    return mark_safe(timeline_html.checkpoint_rows(checkpoints))  # every value escaped there


@register.simple_tag(takes_context=True)
def memberships_of(context: Any, user: Any) -> list[Membership]:
    request = context.get("request")
    if request is not None and getattr(request, "user", None) is user:
        held = access.memberships_here(request)  # once a request, whoever asks
        if held is not None:
            return held
    return access.memberships_of(user)


@register.simple_tag(takes_context=True)
def can_submit_anywhere(context: Any, user: Any) -> bool:
    request = context.get("request")
    if request is not None and getattr(request, "user", None) is user:
        return access.submits_somewhere_here(request)  # once a request, whoever asks
    return access.submit_teams(user).exists()
