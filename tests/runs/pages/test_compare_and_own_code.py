"""The compare view (several runs' loss on one chart) and the bring-your-own-code page."""

from __future__ import annotations

import contextlib
import io
import json
import time
from collections.abc import Callable
from html import unescape
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


def test_compare_gives_each_run_a_colour_of_its_own(member_client: Client, member: Any,
                                                   team: Team, make_job: Callable[..., Job]
                                                   ) -> None:
    ids = ",".join(str(make_job(team, member, name=f"run-{n}").pk) for n in range(8))
    html = member_client.get(reverse("job-compare") + f"?ids={ids}").content.decode()
    runs = json.loads(html.split('id="compare-runs" type="application/json">', 1)[1]
                      .split("</script>", 1)[0])
    assert len(runs) == 8 and len({r["color"] for r in runs}) == 8


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


def test_the_own_code_example_reports_each_steps_real_duration(member_client: Client) -> None:
    """The example runs as printed (with a stand-in training step of known length), and its
    step_time_s is that step's duration, not the moment after it."""
    html = member_client.get(reverse("own-code")).content.decode()
    example = unescape(html.split('id="own-code-example">', 1)[1].split("</pre>", 1)[0])

    def train_one_step() -> float:
        time.sleep(0.003)
        return 2.5

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(example, {"train_one_step": train_one_step, "BATCH_TOKENS": 4096})
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    steps = [e for e in events if e["event"] == "step"]
    assert len(steps) == 100 and all(e["step_time_s"] >= 0.003 for e in steps)
    assert all(abs(e["tokens_per_s"] * e["step_time_s"] - 4096) < 1e-6 for e in steps)
    assert events[-1]["event"] == "run_finished"
    assert events[-1]["wall_s"] >= sum(e["step_time_s"] for e in steps)
