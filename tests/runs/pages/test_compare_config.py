"""Compare's config table: the compared runs' configuration keys side by side, the keys whose
values differ marked, and `?diff=1` (a plain link, no script) keeping only those; values are
text on the page, another team's run is not shown."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from controlplane.runs.models import Job
from controlplane.teams.models import Role, Team
from tests.people import make_user
from tests.runs.pages.conftest import CPU_REQUEST

RUNS = {  # name: arguments after the preset
    "lr-high": ["--lr", "0.01", "--warmup", "10"],
    "lr-mid": ["--lr=0.001", "--tag=<script>x()</script>"],
    "lr-low": ["--lr", "3e-4"],
}


@pytest.fixture
def runs(team: Team, member: Any) -> list[Job]:
    return [Job.objects.create(
        team=team, created_by=member, name=name, custom_job={}, project="p",
        region="us-central1",
        request={**CPU_REQUEST, "name": name, "batch": {"micro_batch_size": 4},
                 "strategy": "fsdp" if name == "lr-low" else "ddp",
                 "args": ["--preset", "tiny", *args]})
        for name, args in RUNS.items()]


def config_table(page: str) -> dict[str, tuple[bool, list[str]]]:
    """key -> (marked as differing, its cells) as the page's config table shows them."""
    table = re.search(r'<table class="grid compact config-table">.*?</table>', page, re.S)[0]
    rows = {}
    for row in re.findall(r"<tr( class=\"differs\")?><th scope=\"row\" class=\"mono\">(.*?)"
                          r"</th>(.*?)</tr>", table, re.S):
        key = re.sub(r"<span.*", "", row[1]).strip()
        cells = re.findall(r'<td class="mono">(.*?)</td>', row[2], re.S)
        assert bool(row[0]) == ("differs</span>" in row[1])  # marked in words too
        rows[key] = (bool(row[0]), cells)
    return rows


def test_the_differing_keys_are_marked_and_the_toggle_keeps_only_them(
        runs: list[Job], member_client: Client, other_team: Team) -> None:
    theirs = Job.objects.create(team=other_team, name="theirs", custom_job={}, project="p",
                                created_by=make_user("oscar", other_team, Role.ADMIN),
                                region="us-central1", request={"args": ["--lr", "9"]})
    ids = ",".join(str(job.pk) for job in [*runs, theirs])
    page = member_client.get(reverse("job-compare"), {"ids": ids}).content.decode()
    rows = config_table(page)
    assert rows["lr"] == (True, ["0.01", "0.001", "0.0003"])
    assert rows["strategy"] == (True, ["ddp", "ddp", "fsdp"])
    assert rows["warmup"] == (True, ["10", "\u2013", "\u2013"])   # only one run has it
    assert rows["batch.micro_batch_size"] == (False, ["4", "4", "4"])
    assert rows["preset"] == (False, ["tiny"] * 3)
    assert rows["tag"][1][1] == "&lt;script&gt;x()&lt;/script&gt;"
    assert "<script>x()" not in page and "9" not in rows["lr"][1]
    assert not any(key.startswith("env") for key in rows)
    differ = sorted(key for key, (marked, _) in rows.items() if marked)
    assert f"{len(differ)} of {len(rows)} keys differ" in page

    # The toggle is a link: the same runs, only the differing keys.
    shown_ids = ",".join(str(job.pk) for job in runs)
    link = f'href="/jobs/compare/?ids={shown_ids.replace(",", "%2C")}&amp;diff=1#config"'
    assert link in page
    only = config_table(member_client.get(reverse("job-compare"),
                                          {"ids": shown_ids, "diff": "1"}).content.decode())
    assert sorted(only) == differ and all(marked for marked, _ in only.values())


def test_runs_that_agree_on_everything_say_so(runs: list[Job], member_client: Client) -> None:
    same = f"{runs[0].pk},{runs[0].pk}"
    page = member_client.get(reverse("job-compare"), {"ids": same, "diff": "1"}).content.decode()
    assert "No key differs." in page and config_table(page) == {}
