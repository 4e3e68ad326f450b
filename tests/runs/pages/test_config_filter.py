"""The job list filtered by a configuration value (?config=KEY OP VALUE) in the API and on the
page: a trainer argument (lr), a nested request key (batch.micro_batch_size), text and numbers,
on PostgreSQL's JSON; a filter outside the grammar is refused naming it and the grammar, and
filters nothing; filtering costs no extra query."""

from __future__ import annotations

import html
import importlib
import re
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from controlplane.runs import config_keys
from controlplane.runs.models import Job
from controlplane.teams.models import Role, Team
from tests.people import make_user
from tests.runs.pages.conftest import CPU_REQUEST
from tests.runs.pages.test_job_list_dashboard import names_in

RUNS = {  # name: (learning rate, micro-batch, strategy)
    "lr-high": ("0.01", 2, "ddp"),
    "lr-mid": ("0.001", 4, "fsdp"),
    "lr-low": ("3e-4", 8, "fsdp"),
}


@pytest.fixture
def runs(team: Team, member: Any, other_team: Team) -> dict[str, Job]:
    made = {}
    for name, (lr, micro, strategy) in RUNS.items():
        request = {**CPU_REQUEST, "name": name, "strategy": strategy,
                   "batch": {"micro_batch_size": micro},
                   "args": ["--preset", "tiny", f"--lr={lr}", "--optimizer", "adamw",
                            "--compile"],
                   "env": {"HF_TOKEN": "secret"}}
        made[name] = Job.objects.create(team=team, created_by=member, name=name,
                                        request=request, custom_job={}, project="p",
                                        region="us-central1")
    # Another team's job with the same configuration is never listed.
    Job.objects.create(team=other_team, created_by=make_user("oscar", other_team, Role.ADMIN),
                       name="theirs", request=made["lr-mid"].request, custom_job={},
                       project="p", region="us-central1")
    return made


def test_a_job_keeps_its_request_and_arguments_as_flat_keys(runs: dict[str, Job]) -> None:
    config = runs["lr-mid"].config
    assert config["lr"] == 0.001 and config["batch.micro_batch_size"] == 4
    assert config["optimizer"] == "adamw" and config["compile"] is True
    assert config["preset"] == "tiny" and config["strategy"] == "fsdp"
    assert config["chief.machine_type"] == "n1-standard-4"
    # The environment (credentials live there), the name and the raw arguments are not config.
    assert not {k for k in config if k.startswith(("env", "name", "args"))}
    assert config_keys.from_args(["--micro-batch-size", "8", "pos", "--dry-run"]) == {
        "micro_batch_size": 8, "dry_run": True}


@pytest.mark.parametrize(("query", "expected"), [
    ("lr=0.001", {"lr-mid"}),
    ("lr=1e-3", {"lr-mid"}),                 # numbers compare as numbers
    ("lr <= 0.001", {"lr-mid", "lr-low"}),
    ("lr>0.001", {"lr-high"}),
    ("lr!=0.001", {"lr-high", "lr-low"}),
    ("batch.micro_batch_size>=4", {"lr-mid", "lr-low"}),
    ("strategy=fsdp", {"lr-mid", "lr-low"}),
    ("strategy!=fsdp", {"lr-high"}),
    ("optimizer=adamw", set(RUNS)),
    ("compile=true", set(RUNS)),
    ("optimizer<1", set()),                  # text is never a number
    ("momentum=0.9", set()),                 # a key no job has
    ("env.HF_TOKEN=secret", set()),          # never filterable
])
def test_the_api_filters_by_a_config_value(runs: dict[str, Job], member: Any, query: str,
                                           expected: set[str]) -> None:
    api = APIClient()
    api.force_authenticate(member)
    answer = api.get("/api/v1/jobs/", {"config": query})
    assert answer.status_code == 200, answer.content
    assert {r["name"] for r in answer.json()["results"]} == expected


@pytest.mark.parametrize(("query", "said"), [
    ("lr~0.001", "'lr~0.001': write KEY OP VALUE"),
    ("lr<abc", "'lr<abc': < compares numbers; 'abc' is not one"),
    ("a b=1", "'a b=1': write KEY OP VALUE"),
    ("lr'; drop table jobs_job; --=1", "write KEY OP VALUE"),
    ("batch..micro=1", "write KEY OP VALUE"),
    ("=0.001", "write KEY OP VALUE"),
    ("k" * 101 + "=1", "a key is at most 100 characters"),
])
def test_a_filter_outside_the_grammar_is_refused_naming_it(
        runs: dict[str, Job], member: Any, query: str, said: str) -> None:
    api = APIClient()
    api.force_authenticate(member)
    answer = api.get("/api/v1/jobs/", {"config": query})
    assert answer.status_code == 400
    assert said in answer.json()["config"][0], answer.json()
    assert "= != < <= > >=" in answer.json()["config"][0]


def test_the_page_filters_and_a_bad_filter_filters_nothing(runs: dict[str, Job],
                                                           member_client: Client) -> None:
    url = reverse("job-list")
    page = member_client.get(url, {"config": "lr<=0.001"}).content.decode()
    assert sorted(names_in(page)) == ["lr-low", "lr-mid"]
    assert 'name="config" value="lr&lt;=0.001"' in page
    page = member_client.get(url, {"config": "<b>x</b>"}).content.decode()
    assert sorted(names_in(page)) == sorted(RUNS)
    error = html.unescape(re.search(r'id="filter-error">([^<]*)<', page)[1])
    assert error.startswith("Filter not applied: config: '<b>x</b>': write KEY OP VALUE")
    assert "<b>x</b>" not in page


def test_filtering_costs_no_extra_query(runs: dict[str, Job], member: Any,
                                        member_client: Client) -> None:
    api = APIClient()
    api.force_authenticate(member)

    def queries(client: Any, path: str, params: dict[str, str]) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(path, params).status_code == 200
        return len(captured.captured_queries)

    Job.objects.filter(pk__in=[job.pk for job in runs.values()]).update(tags={"sweep": "a"})
    for client, path in ((api, "/api/v1/jobs/"), (member_client, reverse("job-list"))):
        client.get(path)  # the rate limiter's first-request housekeeping, out of the count
        # The same rows as the tag filter, its neighbour that the jobs' tally cannot count
        # either (both count their rows): as many queries.
        assert queries(client, path, {"config": "preset=tiny"}) == queries(
            client, path, {"tag": "sweep=a"})


def test_jobs_made_before_the_column_get_theirs_from_their_request(
        runs: dict[str, Job]) -> None:
    from django.apps import apps

    migration = importlib.import_module("controlplane.runs.migrations.0008_job_config")
    Job.objects.update(config={})
    migration.flatten_existing(apps, None)
    assert Job.objects.get(pk=runs["lr-low"].pk).config["lr"] == 0.0003
