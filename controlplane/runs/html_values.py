"""Values written into HTML by Python as the template engine writes `{{ value }}`: localized,
then escaped. For the parts of the pages drawn in Python (timeline_html.py, job_rows_html.py),
where an include or a variable lookup per value cost more than the page's queries."""

from __future__ import annotations

import html
from datetime import tzinfo
from typing import Any

from django.conf import settings
from django.utils import timezone
from django.utils.formats import localize
from django.utils.html import conditional_escape


def value_html(value: Any) -> str:
    """A value as `{{ value }}` writes it. A plain string is escaped by the standard library's
    escape, which Django's wraps (a quarter of its cost); safe strings are left as they are."""
    if type(value) is str:
        return html.escape(value)
    if type(value) is int and not settings.USE_THOUSAND_SEPARATOR:
        return str(value)  # what localize() makes of it, without its lookups
    return str(conditional_escape(localize(value)))


def reader_zone(zone: tzinfo | None) -> tzinfo:
    """The reader's time zone. The current zone is a context-local lookup: a render asks once
    for all its values."""
    return zone if zone is not None else timezone.get_current_timezone()
