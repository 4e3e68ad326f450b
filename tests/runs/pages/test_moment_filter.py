"""The pages' `moment` filter writes what Django's `date` filter writes, in the current time
zone, for every format the job pages give it (and hands any other format to `date`)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.template import Context, Template
from django.utils import timezone

MOMENTS = [datetime(2026, 1, 5, 3, 4, 5, tzinfo=UTC),
           datetime(2026, 7, 31, 23, 59, 59, 999999, tzinfo=UTC),
           datetime(2026, 3, 29, 1, 30, tzinfo=UTC), None]
FORMATS = ["c", "m-d H:i:s", "m-d H:i", "Y-m-d H:i", "Y-m-d H:i:s", "H:i:s", "D j M"]


@pytest.mark.parametrize("zone", ["UTC", "Europe/Paris", "America/Los_Angeles",
                                  "Asia/Kolkata"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_moment_writes_what_date_writes(zone: str, fmt: str) -> None:
    fast = Template('{% load jobs_ui %}{{ value|moment:fmt }}')
    django = Template("{{ value|date:fmt }}")
    with timezone.override(zone):
        for value in MOMENTS:
            context = {"value": value, "fmt": fmt}
            assert fast.render(Context(context)) == django.render(Context(context)), value
