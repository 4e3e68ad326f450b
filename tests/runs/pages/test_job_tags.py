"""Tags and a note on a job: set from its page or the API (PATCH /api/v1/jobs/<id>/) by its
team's members, read by its viewers, invisible to other teams; the list filters by a tag on the
page and in the API; what breaks the rules is refused naming the field, changing nothing."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from controlplane.runs.models import Job, JobKind
from controlplane.security.models import AuditEntry
from controlplane.teams.models import Team
from tests.runs.pages.test_job_list_dashboard import names_in


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def jobs(team: Team, member: Any, make_job: Callable[..., Job]) -> dict[str, Job]:
    made = {name: make_job(team, member, name=name) for name in ("lr-1", "lr-2", "other")}
    made["ray"] = make_job(team, member, name="ray-run", kind=JobKind.RAY)
    return made


def test_a_member_tags_and_notes_a_job_through_the_api(jobs: dict[str, Job],
                                                       member: Any) -> None:
    job = jobs["lr-1"]
    answer = api(member).patch(f"/api/v1/jobs/{job.pk}/", {
        "tags": {"experiment": "lr-sweep", "owner": "ann", "baseline": ""},
        "note": "warmup too short? <b>check</b>"}, format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["tags"] == {"experiment": "lr-sweep", "owner": "ann", "baseline": ""}
    assert answer.json()["note"] == "warmup too short? <b>check</b>"
    # A field left out stays; {} removes the tags.
    answer = api(member).patch(f"/api/v1/jobs/{job.pk}/", {"note": ""}, format="json")
    assert answer.json()["tags"]["owner"] == "ann" and answer.json()["note"] == ""
    rows = api(member).get("/api/v1/jobs/").json()["results"]
    assert {r["name"]: r["tags"] for r in rows}["lr-1"]["experiment"] == "lr-sweep"
    # A Ray job is tagged as any job is.
    ray = api(member).patch(f"/api/v1/jobs/{jobs['ray'].pk}/", {"tags": {"k": "v"}},
                            format="json")
    assert ray.status_code == 200 and ray.json()["tags"] == {"k": "v"}


def test_add_tags_and_remove_tags_change_only_the_ones_named(jobs: dict[str, Job],
                                                             member: Any) -> None:
    job = jobs["lr-1"]
    Job.objects.filter(pk=job.pk).update(tags={"keep": "me", "owner": "ann"})
    answer = api(member).patch(f"/api/v1/jobs/{job.pk}/", {
        "add_tags": {"experiment": "lr-sweep", "owner": "bob"}, "remove_tags": ["keep"]},
        format="json")
    assert answer.status_code == 200, answer.content
    assert answer.json()["tags"] == {"owner": "bob", "experiment": "lr-sweep"}
    entry = AuditEntry.objects.filter(action="job.tag").latest("pk")
    assert entry.detail["was"] == {"keep": "me", "owner": "ann"}
    assert entry.detail["tags"] == {"owner": "bob", "experiment": "lr-sweep"}


@pytest.mark.parametrize(("body", "field", "said"), [
    ({"tags": {"Experiment": "x"}}, "tags", "'Experiment': a key is 1-63 lowercase letters"),
    ({"tags": {"owner": "<script>"}}, "tags", "owner='<script>': a value is up to 63"),
    ({"tags": {f"k{n}": "" for n in range(17)}}, "tags", "17 tags; a job has at most 16"),
    ({"tags": ["a"]}, "tags", "Expected a dictionary"),
    ({"note": "x" * 2001}, "note", "2,001 characters; a note is at most 2,000"),
    ({"labels": {"a": "b"}}, "labels", "did you mean tags?"),
    ({"tags": {"a": "b"}, "add_tags": {"c": ""}}, "tags", "not both"),
    ({"add_tags": {"Owner": "x"}}, "add_tags", "'Owner': a key is 1-63 lowercase letters"),
    ({"add_tags": {f"k{n}": "" for n in range(16)}}, "tags", "17 tags; a job has at most 16"),
    ({"remove_tags": ["nope"]}, "remove_tags", "has no tag 'nope' (its tags: keep)"),
    ({"add_tags": {"a": ""}, "remove_tags": ["a"]}, "remove_tags", "a: both added and removed"),
])
def test_what_breaks_the_rules_is_refused_by_field_and_changes_nothing(
        jobs: dict[str, Job], member: Any, body: dict[str, Any], field: str,
        said: str) -> None:
    job = jobs["lr-1"]
    Job.objects.filter(pk=job.pk).update(tags={"keep": "me"}, note="kept")
    answer = api(member).patch(f"/api/v1/jobs/{job.pk}/", {**body}, format="json")
    assert answer.status_code == 400
    assert said in " ".join(answer.json()[field]), answer.json()
    job.refresh_from_db()
    assert (job.tags, job.note) == ({"keep": "me"}, "kept")


def test_only_the_team_s_members_may_change_them(jobs: dict[str, Job], viewer: Any,
                                                 outsider: Any) -> None:
    job = jobs["lr-1"]
    assert api(viewer).patch(f"/api/v1/jobs/{job.pk}/", {"tags": {"a": "b"}},
                             format="json").status_code == 403
    assert api(outsider).patch(f"/api/v1/jobs/{job.pk}/", {"tags": {"a": "b"}},
                               format="json").status_code == 404
    assert Job.objects.get(pk=job.pk).tags == {}


def test_the_list_filters_by_tag_in_the_api(jobs: dict[str, Job], member: Any) -> None:
    Job.objects.filter(pk=jobs["lr-1"].pk).update(tags={"experiment": "lr-sweep"})
    Job.objects.filter(pk=jobs["lr-2"].pk).update(tags={"experiment": "lr-sweep-2",
                                                        "a__b": "x"})

    def names(**query: str) -> set[str]:
        answer = api(member).get("/api/v1/jobs/", {"kind": "all", **query})
        assert answer.status_code == 200, answer.content
        return {r["name"] for r in answer.json()["results"]}

    assert names(tag="experiment") == {"lr-1", "lr-2"}
    assert names(tag="experiment=lr-sweep") == {"lr-1"}
    assert names(tag="nothing") == set()
    # A key is a key, never a path into the JSON.
    assert names(tag="a__b=x") == {"lr-2"}
    refused = api(member).get("/api/v1/jobs/", {"tag": "Bad Key"})
    assert refused.status_code == 400 and "a key is 1-63 lowercase" in refused.json()["tag"][0]


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_job_page_shows_them_and_its_form_changes_them(
        jobs: dict[str, Job], member: Any, viewer: Any) -> None:
    member_client, viewer_client = logged_in(member), logged_in(viewer)
    job = jobs["lr-1"]
    page = member_client.post(reverse("job-tags", args=[job.pk]), {
        "tags": "experiment=lr-sweep\nowner=ann, baseline", "note": "<script>x()</script>"},
        follow=True).content.decode()
    job.refresh_from_db()
    assert job.tags == {"experiment": "lr-sweep", "owner": "ann", "baseline": ""}
    logged = AuditEntry.objects.get(action="job.tag", target_id=str(job.pk))
    assert (logged.actor_name, logged.via, logged.detail["changed"]) == (
        "ann", "web", ["tags", "note"])
    assert "<script>x()" not in page and "&lt;script&gt;x()&lt;/script&gt;" in page
    notes = re.search(r'<section class="panel job-notes".*?</section>', page, re.S)[0]
    assert ">experiment=lr-sweep</a>" in notes and ">baseline</a>" in notes
    assert 'href="/?kind=all&amp;tag=experiment%3Dlr-sweep"' in notes
    # A refused edit names the field and changes nothing.
    page = member_client.post(reverse("job-tags", args=[job.pk]), {
        "tags": "Owner=ann", "note": "changed"}, follow=True).content.decode()
    assert "Not saved: tags: &#x27;Owner&#x27;: a key is 1-63" in page
    job.refresh_from_db()
    assert job.tags["owner"] == "ann" and job.note == "<script>x()</script>"
    # A viewer reads them and has no form; a post is refused.
    page = viewer_client.get(reverse("job-detail", args=[job.pk])).content.decode()
    assert ">owner=ann</a>" in page and 'name="tags"' not in page
    assert viewer_client.post(reverse("job-tags", args=[job.pk]),
                              {"tags": ""}).status_code == 403


def test_the_job_list_filters_by_tag_and_shows_them(jobs: dict[str, Job],
                                                    member_client: Client) -> None:
    Job.objects.filter(pk=jobs["lr-1"].pk).update(tags={"experiment": "lr-sweep"})
    Job.objects.filter(pk=jobs["ray"].pk).update(tags={"experiment": "lr-sweep"})
    url = reverse("job-list")
    page = member_client.get(url, {"tag": "experiment=lr-sweep"}).content.decode()
    assert sorted(names_in(page)) == ["lr-1", "ray-run"]
    assert '<a class="tag mono" href="/?tag=experiment%3Dlr-sweep">experiment=lr-sweep</a>' \
        in page
    assert 'name="tag" value="experiment=lr-sweep"' in page
    # A malformed tag: the list without the filter, and a line that says why.
    page = member_client.get(url, {"tag": "<b>x</b>"}).content.decode()
    assert len(names_in(page)) == 4
    error = html.unescape(re.search(r'id="filter-error">([^<]*)<', page)[1])
    assert error.startswith("Filter not applied: tag: '<b>x</b>': a key is 1-63")
    assert "<b>x</b>" not in page.replace("&lt;b&gt;x&lt;/b&gt;", "")
