"""Filters and tags the job pages use: state badges, pool summaries, moments, JSON, memory
sizes, and the hot fragments (controlplane/runs/fragments.py) placed in the Django templates."""

from __future__ import annotations

import json
from typing import Any

from django import template
from django.template.defaulttags import querystring
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from controlplane.runs import fragments, uris
from controlplane.runs.checkpoints import Checkpoint
from controlplane.runs.models import ACTIVE_STATES
from controlplane.teams import access
from controlplane.teams.models import Membership
from vertexplan import memory_text, summaries

register = template.Library()

# The same filters the fragments use, so a moment or a badge reads alike on every page. Django
# hands `moment` the value in the reader's zone already.
register.filter("moment", fragments.moment, expects_localtime=True)
register.filter("state_class", fragments.state_class)
register.filter("progress", fragments.progress)
# A checkpoint path as the gs:// URI it names (the printed path in the title).
register.filter("storage_uri", uris.storage_uri)
# A memory plan's GiB figures in the unit that shows them ('477 MB', never '0.00 GB').
register.filter("memory_size", memory_text.size_text)


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
    # `now` ends a running job's running time.
    return fragments.render("runs/fragments/job_rows.html", jobs=jobs, now=timezone.now())


@register.simple_tag
def timeline_items(items: list[dict[str, Any]]) -> SafeString:
    return fragments.render("runs/fragments/timeline_items.html", items=items)


@register.simple_tag
def checkpoint_rows(checkpoints: list[Checkpoint]) -> SafeString:
    return fragments.render("runs/fragments/checkpoint_rows.html", checkpoints=checkpoints)


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
