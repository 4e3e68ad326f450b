"""The compare view (several runs' loss on one chart) and the bring-your-own-code page."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.runs.models import Job
from controlplane.teams.models import Team


@pytest.fixture
def job(member: Any, team: Team, make_job: Callable[..., Job]) -> Job:
    return make_job(team, member, name="gpt-tiny", last_step=40, total_steps=100,
                    last_loss=2.5, error_message="")


def test_compare_lists_visible_jobs_and_says_which_ids_it_left_out(member_client: Client,
                                                                    job: Job) -> None:
    url = reverse("job-compare") + f"?ids={job.pk},abc,999999"
    response = member_client.get(url)
    assert response.status_code == 200
    html = response.content.decode()
    runs = json.loads(html.split('id="compare-runs" type="application/json">', 1)[1]
                      .split("</script>", 1)[0])
    assert [r["id"] for r in runs] == [job.pk]
    assert runs[0]["metrics_url"] == reverse("job-metrics", args=[job.pk])
    assert "abc" in html and "999999" in html and "<script>" not in html


def test_compare_caps_the_number_of_runs(member_client: Client, job: Job) -> None:
    ids = ",".join(str(job.pk + n) for n in range(12))
    html = member_client.get(reverse("job-compare") + f"?ids={ids}").content.decode()
    assert "At most 8 runs" in html


def test_own_code_page_documents_the_event_contract(member_client: Client, job: Any) -> None:
    html = member_client.get(reverse("own-code")).content.decode()
    example = html.split('id="own-code-example">', 1)[1].split("</pre>", 1)[0]
    assert 8 <= len(example.strip().splitlines()) <= 14
    for event in ("run_started", "step", "eval", "checkpoint_saved", "preempted",
                  "run_finished"):
        assert f'<td class="mono">{event}</td>' in html
    page = member_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert reverse("own-code") in page and 'id="metrics-empty-hint"' in page
