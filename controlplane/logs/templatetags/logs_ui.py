"""The log panel's lines: logs/jinja2/logs/fragments/log_lines.html, drawn by Jinja2 (200 lines
through Django's engine cost more than the rest of the job page together, and the panel is
redrawn every 3 s while a job runs: controlplane/runs/fragments.py)."""

from __future__ import annotations

from collections.abc import Iterable

from django import template
from django.utils.safestring import SafeString

from controlplane.logs.queries import TailLine
from controlplane.runs import fragments

register = template.Library()


@register.simple_tag
def log_lines(lines: Iterable[TailLine]) -> SafeString:
    return fragments.render("logs/fragments/log_lines.html", lines=lines)
