"""The log panel's lines (a Jinja2 fragment, logs/fragments/log_lines.html, not Django's engine,
for speed): every field a trainer or a replica controls is escaped, and each line reads as
before."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.test import Client

from controlplane.logs.models import LogLine
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Role, Team
from tests.people import make_user


def test_hostile_lines_are_escaped_and_read_as_the_terminal_shows_them(team: Team) -> None:
    user = make_user("ann", team, Role.VIEWER)
    job = Job.objects.create(team=team, created_by=user, name="exp", request={}, custom_job={},
                             project="p", region="us-central1", state=JobState.SUCCEEDED)
    at = datetime(2026, 3, 1, 12, 30, 5, 123456, tzinfo=UTC)
    LogLine.objects.create(job=job, attempt=1, timestamp=at, severity=500,
                           replica='workerpool0-0"><b>', insert_id='a"<1>',
                           message="<script>alert('x')</script> & done")
    LogLine.objects.create(job=job, attempt=1, timestamp=at.replace(second=6), severity=0,
                           replica="", insert_id="a2", message="plain")
    client: Any = Client()
    client.force_login(user)
    html = client.get(f"/jobs/{job.pk}/partials/logs/").content.decode()

    assert "<script>alert" not in html and "<b>" not in html
    assert ('<div class="log-line sev-error" data-id="a&quot;&lt;1&gt;">'
            '<time>03-01 12:30:05.123</time> '
            '<span class="replica">workerpool0-0&quot;&gt;&lt;b&gt;</span> '
            '<span class="sev">ERROR</span> '
            '<span class="msg">&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; &amp; done'
            '</span></div>') in html
    # No replica and severity 0 (DEFAULT): a dash and DEFAULT, oldest line first.
    assert ('<span class="replica">-</span> <span class="sev">DEFAULT</span> '
            '<span class="msg">plain</span>') in html
    assert html.index("alert") < html.index("plain")
    assert "No log lines yet" not in html


def test_a_job_without_lines_says_so(team: Team) -> None:
    user = make_user("ann", team, Role.VIEWER)
    job = Job.objects.create(team=team, created_by=user, name="exp", request={}, custom_job={},
                             project="p", region="us-central1", state=JobState.SUCCEEDED)
    client: Any = Client()
    client.force_login(user)
    assert "No log lines yet" in client.get(f"/jobs/{job.pk}/partials/logs/").content.decode()
