"""The jobs' tally (runs.models.JobTally, kept by PostgreSQL's triggers) and the job list's
count read from it (controlplane/runs/counts.py): the same numbers as counting the jobs,
whichever way the jobs were written."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Any

import pytest
from django.db import connection
from django.db.models import Sum
from django.test.utils import CaptureQueriesContext
from rest_framework.test import APIClient

from controlplane.runs import counts
from controlplane.runs.access import visible_jobs
from controlplane.runs.filters import filter_jobs
from controlplane.runs.models import Job, JobKind, JobState, JobTally
from controlplane.runs.tasks import fold_job_tally
from controlplane.security import tokens
from controlplane.teams.models import Role, Team
from tests.people import make_user

pytestmark = pytest.mark.django_db

REQUEST = {"name": "exp", "chief": {"machine_type": "n1-standard-4"}}


@pytest.fixture(autouse=True)
def _postgresql() -> None:
    # The triggers are PostgreSQL's: `make test` runs on it, and CI must not skip this.
    assert connection.vendor == "postgresql", "the job tally is kept by PostgreSQL triggers"


def _job(team: Team, user: Any, name: str, **fields: Any) -> Job:
    return Job(team=team, created_by=user, name=name, request=REQUEST, custom_job={},
               project="p", region="us-central1", **fields)


def _tally() -> Counter[tuple[Any, ...]]:
    sums = (JobTally.objects.values("team_id", "kind", "state", "created_by_id")
            .annotate(total=Sum("n")))
    return Counter({(r["team_id"], r["kind"], r["state"], r["created_by_id"]): r["total"]
                    for r in sums if r["total"]})


def _counted() -> Counter[tuple[Any, ...]]:
    return Counter(Job.objects.values_list("team_id", "kind", "state", "created_by_id"))


@pytest.fixture
def people() -> dict[str, Any]:
    vision = Team.objects.create(name="Vision", slug="vision")
    speech = Team.objects.create(name="Speech", slug="speech")
    ann = make_user("ann", vision, Role.MEMBER)
    bob = make_user("bob", vision, Role.ADMIN)
    Team.objects.get(slug="speech").memberships.create(user=bob, role=Role.MEMBER)
    oscar = make_user("oscar", speech, Role.ADMIN)
    return {"vision": vision, "speech": speech, "ann": ann, "bob": bob, "oscar": oscar}


def test_the_tally_follows_every_way_a_job_is_written(people: dict[str, Any]) -> None:
    vision, speech, ann, bob = people["vision"], people["speech"], people["ann"], people["bob"]
    start = JobTally.objects.count()

    one = _job(vision, ann, "one")
    one.save()
    Job.objects.bulk_create([_job(vision, bob, f"bulk-{n}", state=JobState.RUNNING)
                             for n in range(5)]
                            + [_job(speech, bob, "theirs", kind=JobKind.TRIAL)])
    assert _tally() == _counted()

    one.state = JobState.RUNNING
    one.save()  # a model save
    Job.objects.filter(name__startswith="bulk-").update(state=JobState.SUCCEEDED)  # in bulk
    with connection.cursor() as cursor:  # and by hand
        cursor.execute("UPDATE jobs_job SET state = 'FAILED' WHERE name = 'bulk-0'")
    assert _tally() == _counted()

    written = JobTally.objects.count()
    Job.objects.filter(pk=one.pk).update(last_step=10, name="renamed")  # no counted column
    assert JobTally.objects.count() == written

    Job.objects.filter(name="bulk-1").delete()
    Job.objects.filter(name="theirs").update(team=vision)
    assert _tally() == _counted()
    assert sum(_tally().values()) == Job.objects.count() == 6
    assert JobTally.objects.count() > start


def test_fold_sums_each_group_into_one_row(people: dict[str, Any]) -> None:
    vision, ann = people["vision"], people["ann"]
    jobs = Job.objects.bulk_create([_job(vision, ann, f"j{n}") for n in range(6)])
    for state in (JobState.RUNNING, JobState.SUCCEEDED):
        Job.objects.filter(pk__in=[j.pk for j in jobs[:4]]).update(state=state)
    Job.objects.filter(pk=jobs[5].pk).delete()
    before = _tally()

    fold_job_tally.apply()  # the beat task, run here

    assert _tally() == before == _counted()
    # One row per group with jobs in it: (QUEUED: 1), (SUCCEEDED: 4); the emptied ones gone.
    assert sorted(JobTally.objects.filter(team_id=vision.pk).values_list("state", "n")) == [
        (JobState.QUEUED, 1), (JobState.SUCCEEDED, 4)]
    assert counts.fold() == 0  # nothing left to fold


PARAMS = {
    "kind": ["", "job", "TRIAL", " all "],
    "state": ["", "running", " SUCCEEDED"],
    "team": ["", "vision", "speech", "nobody"],
    "user": ["", "ann", "bob", "nobody"],
}


def test_the_list_count_is_the_number_of_jobs_listed(people: dict[str, Any]) -> None:
    vision, speech = people["vision"], people["speech"]
    ann, bob, oscar = people["ann"], people["bob"], people["oscar"]
    Job.objects.bulk_create(
        [_job(vision, ann, f"a{n}", state=JobState.RUNNING) for n in range(3)]
        + [_job(vision, bob, f"b{n}", state=JobState.SUCCEEDED) for n in range(2)]
        + [_job(vision, bob, "t", kind=JobKind.TRIAL, state=JobState.RUNNING)]
        + [_job(speech, bob, "s", state=JobState.RUNNING)]
        + [_job(speech, oscar, f"o{n}") for n in range(4)])
    client = APIClient()
    client.force_authenticate(bob)

    for values in itertools.product(*PARAMS.values()):
        params = {k: v for k, v in zip(PARAMS, values, strict=True) if v}
        expected = filter_jobs(visible_jobs(bob), params).count()
        with CaptureQueriesContext(connection) as queries:
            response = client.get("/api/v1/jobs/", params)
        assert response.status_code == 200, (params, response.content)
        assert response.json()["count"] == expected, params
        # Read from the tally: no query counted the jobs.
        assert not [q for q in queries if "COUNT(" in q["sql"].upper()
                    and "jobs_job" in q["sql"].split("FROM", 1)[1]], params

    # Filters the tally cannot answer still count, and still right.
    response = client.get("/api/v1/jobs/", {"created_after": "2000-01-01"})
    assert response.json()["count"] == 10  # bob's two teams' jobs submitted as jobs
    # A token narrowed to one team counts only that team's jobs.
    narrowed = APIClient()
    key = tokens.create(bob, "speech only", team_slugs=["speech"]).key
    narrowed.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert narrowed.get("/api/v1/jobs/").json()["count"] == 5
    # Someone else's jobs are never in anyone's count.
    client.force_authenticate(ann)
    assert client.get("/api/v1/jobs/", {"kind": "all"}).json()["count"] == 6
