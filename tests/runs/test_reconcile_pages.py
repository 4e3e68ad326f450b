"""The reconcile sweep's database work grows with pages of jobs, not jobs (issue 39): a page of
jobs whose CustomJobs are as the rows say costs the same few queries for 10 jobs as for 50,
and a page whose CustomJobs moved on (PENDING -> RUNNING, the burst of a fleet's start) four
queries more per job that moved (its own writes), where the per-job code cost about 35 a job
either way.

Against the real emulator through Google's clients, with the jobs written as
tests/runs/test_reconcile_listing.py writes them (no replica processes)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from typing import Any

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from controlplane.runs import reconcile
from controlplane.runs.models import Job, JobAttempt, JobState
from controlplane.teams.models import Team
from localvertex.server import Emulator
from tests.runs import test_reconcile_listing as listing
from tests.runs.test_reconcile_listing import Vertex, make_jobs, remote_name

# The listing tests' emulator (one for the module), project and owner.
emulator, project, owner = listing.emulator, listing.project, listing.owner

# Queries a page may cost whatever its number of jobs (the sweep's reads, the page's, each
# receiver's, the transactions' savepoints): measured 14 and 19 (with health reads once the
# jobs run) for a steady page, 25 besides the moved jobs' own for a page that moved.
PAGE_QUERIES = 30
# What each job that moved costs: its attempt's row, its job's row and its timeline event (in
# Job.update_state): measured 3 (its team's Slack channels, the state change's notification,
# are read once a page).
MOVED_QUERIES = 4


def _sweep_queries() -> int:
    with CaptureQueriesContext(connection) as queries:
        reconcile.sweep(budget_s=3600)
    return len(queries)


def _fleet(vertex: Vertex, team: Team, owner: Any, n: int, tag: str) -> dict[str, Job]:
    """N jobs PENDING on Vertex and in their rows."""
    began = timezone.now() - timedelta(minutes=3)
    return make_jobs(vertex, team, owner, [f"{tag}{i}" for i in range(n)],
                     remote="JOB_STATE_PENDING", at=began)


def test_a_sweep_costs_queries_by_page_not_by_job(emulator: Emulator, project: str,
                                                   team: Team, owner: Any) -> None:
    vertex = Vertex(emulator, project)
    counts: dict[int, dict[str, int]] = {}
    for n in (10, 50):
        Job.objects.all().delete()
        jobs = _fleet(vertex, team, owner, n, f"n{n}-")
        _sweep_queries()  # the first look at a job writes its restart fingerprint
        counts[n] = {"steady": _sweep_queries()}
        started = timezone.now() - timedelta(minutes=1)
        for job in jobs.values():
            vertex.move(remote_name(job), "JOB_STATE_RUNNING", started)
        counts[n]["moved"] = _sweep_queries()
        counts[n]["steady again"] = _sweep_queries()
        rows = Job.objects.filter(pk__in=[job.pk for job in jobs.values()])
        # The sweeps did what they say: every row followed, once.
        assert Counter(rows.values_list("state", flat=True)) == {JobState.RUNNING: n}
        assert set(rows.values_list("started_at", flat=True)) == {started}
        assert JobAttempt.objects.filter(job__in=rows, vertex_state="JOB_STATE_RUNNING",
                                         started_at=started).count() == n
        assert Counter(kind for job in rows for kind in job.events.values_list(
            "kind", flat=True)) == {"state": n}
        assert rows.filter(reconciled_at__isnull=True).count() == 0

    for n in (10, 50):
        assert counts[n]["steady"] <= PAGE_QUERIES, counts
        assert counts[n]["steady again"] <= PAGE_QUERIES, counts
        assert counts[n]["moved"] <= PAGE_QUERIES + MOVED_QUERIES * n, counts
    # Independent of the number of jobs where nothing moved; by the job only where one did.
    assert counts[50]["steady"] == counts[10]["steady"], counts
    assert counts[50]["steady again"] == counts[10]["steady again"], counts
    assert counts[50]["moved"] - counts[10]["moved"] <= MOVED_QUERIES * 40, counts


def test_a_page_of_starts_reads_its_teams_slack_channels_once(
        emulator: Emulator, project: str, team: Team, owner: Any) -> None:
    """Each start queues its RUNNING message for the channels that want it, from one read of
    the team's channels for the page (it was one read a job)."""
    from controlplane.notifications.models import Notification, SlackChannel

    wanted, other = (SlackChannel(team=team, name=name, kind="webhook", notify_on=notify_on)
                     for name, notify_on in (("runs", ["running"]), ("fails", ["failed"])))
    for channel in (wanted, other):
        channel.set_secret("https://hooks.slack.com/services/T0/B0/x")
        channel.save()
    vertex = Vertex(emulator, project)
    jobs = _fleet(vertex, team, owner, 20, "slack-")
    reconcile.sweep(budget_s=3600)
    started = timezone.now() - timedelta(minutes=1)
    for job in jobs.values():
        vertex.move(remote_name(job), "JOB_STATE_RUNNING", started)
    with CaptureQueriesContext(connection) as queries:
        reconcile.sweep(budget_s=3600)
    table = SlackChannel._meta.db_table
    reads = [q["sql"] for q in queries if q["sql"].startswith("SELECT") and
             f'FROM "{table}"' in q["sql"]]
    assert len(reads) == 1, reads
    sent = Notification.objects.filter(key__endswith=":running")
    assert Counter(sent.values_list("channel__name", flat=True)) == {"runs": 20}
    assert set(sent.values_list("key", flat=True)) == {
        f"job-{job.pk}:running" for job in jobs.values()}
