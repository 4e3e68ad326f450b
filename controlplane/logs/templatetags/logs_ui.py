"""The log panel's lines, written in Python: 200 lines through the template engine cost more
than the rest of the job page together (about 130 us a line against 5), and the panel is
redrawn every 3 s while a job runs. The markup is the template's, every field escaped."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import tzinfo
from html import escape  # Django's escape is this, behind a wrapper costing 3x

from django import template
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from controlplane.logs.queries import TailLine
from vertexplan.summaries import severity_class, severity_name

register = template.Library()


@register.simple_tag
def log_lines(lines: Iterable[TailLine]) -> SafeString:
    # The reader's zone asked once: asking it per line (a context-local lookup) cost more
    # than writing the line.
    zone = timezone.get_current_timezone()
    return mark_safe("".join(_line(line, zone) for line in lines))  # fields escaped in _line


def _line(line: TailLine, zone: tzinfo) -> str:
    # As the template's `date:"m-d H:i:s.u"|slice:":18"`: milliseconds, in the current zone.
    moment = line.timestamp.astimezone(zone).strftime("%m-%d %H:%M:%S.%f")[:18]
    return (f'\n    <div class="log-line {severity_class(line.severity)}" '
            f'data-id="{escape(line.insert_id)}"><time>{moment}</time> '
            f'<span class="replica">{escape(line.replica or "-")}</span> '
            f'<span class="sev">{severity_name(line.severity)}</span> '
            f'<span class="msg">{escape(line.message)}</span></div>')
