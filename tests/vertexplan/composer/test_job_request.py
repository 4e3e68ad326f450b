"""The job request read once: what reading decides (region, strategy, scheduling, the older
spelling spot, the workers' inherited fields, the counts as numbers), and the dict a job
stores, given back unchanged by to_dict."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.vertexplan.composer.helpers import A100_8, compose_request, job
from vertexplan import interop, presets
from vertexplan.composer import DEFAULTS, JobRequest, compose

CORPUS = Path(__file__).parents[1] / "interop" / "corpus"


def stored_requests() -> list[dict]:
    """Requests as jobs store them: the presets and every importable corpus document, each
    with its region written in (as the control plane writes it)."""
    found = [{**p.request, "region": "us-central1"} for p in presets.PRESETS]
    found += [interop.import_text(p.read_text(), region="europe-west4", filename=p.name).request
              for p in sorted(CORPUS.iterdir())
              if p.suffix in (".yaml", ".json", ".py") and not p.name.startswith("invalid_")]
    return found


def test_a_stored_request_reads_back_byte_for_byte() -> None:
    requests = stored_requests()
    assert len(requests) > 20
    for stored in requests:
        again = JobRequest.from_dict(stored).to_dict()
        assert json.dumps(again) == json.dumps(stored), stored.get("name")
        # Composing it again stores the same dict.
        assert json.dumps(compose(JobRequest.from_dict(again)).request.to_dict()) == \
            json.dumps(stored)


def test_the_region_left_out_is_the_defaults_and_is_written_in() -> None:
    read = JobRequest.from_dict(job())
    assert read.region == DEFAULTS.region() and read.to_dict()["region"] == read.region
    assert JobRequest.from_dict(job(region="europe-west4")).region == "europe-west4"
    assert JobRequest.from_dict(job(region="")).region == DEFAULTS.region()


def test_strategy_and_scheduling_are_decided_once() -> None:
    read = JobRequest.from_dict(job())
    assert (read.strategy, read.scheduling, read.precision) == ("ddp", "STANDARD", None)
    spot = JobRequest.from_dict(job(spot=True))
    assert spot.scheduling == "SPOT" and "spot" not in spot.to_dict() and not spot.problems
    assert "spot" not in JobRequest.from_dict(job(spot=False)).to_dict()


def test_spot_against_another_scheduling_strategy_is_a_problem_on_its_field() -> None:
    read = JobRequest.from_dict(job(spot=True, scheduling_strategy="FLEX_START"))
    assert list(read.problems) == ["spot"] and read.scheduling == "FLEX_START"
    assert compose(read).errors["spot"] == list(read.problems["spot"])


def test_the_workers_inherit_the_chiefs_machine_and_keep_what_they_give() -> None:
    read = JobRequest.from_dict(job(chief={**A100_8, "accelerator_count": "8"},
                                    workers={"replica_count": "3"}))
    workers = read.pools["workers"]
    assert (workers.machine_type, workers.accelerator_count, workers.accelerators) == \
        ("a2-highgpu-8g", "8", 8)
    assert (workers.replica_count, workers.replicas) == ("3", 3)
    given = read.given_pools["workers"]
    assert given.machine_type is None and given.keys == frozenset({"replica_count"})
    own = JobRequest.from_dict(job(workers={"machine_type": "n1-standard-8"}))
    assert own.pools["workers"].accelerator_type is None


def test_values_that_are_no_numbers_are_kept_for_the_rules_to_name() -> None:
    read = JobRequest.from_dict(job(chief={"machine_type": "n1-standard-4",
                                           "replica_count": "two"}))
    chief = read.pools["chief"]
    assert (chief.replica_count, chief.replicas) == ("two", None)
    assert "chief.replica_count" in compose(read).errors


def test_a_chief_that_is_no_object_is_composed_empty_and_refused() -> None:
    read = JobRequest.from_dict({"name": "x", "chief": "n1-standard-4", "workers": []})
    assert read.malformed_pools == ("chief", "workers")
    assert "chief" in read.pools and "chief" not in read.given_pools
    assert {"chief", "workers"} <= set(compose(read).errors)


def test_it_is_frozen_and_to_dict_is_a_copy() -> None:
    read = JobRequest.from_dict(job(env={"A": "1"}))
    with pytest.raises(dataclasses.FrozenInstanceError):
        read.region = "europe-west4"  # type: ignore[misc]
    copy = read.to_dict()
    copy["env"]["A"] = "2"
    assert read.to_dict()["env"] == {"A": "1"}


def test_reading_leaves_the_dict_it_was_given_alone() -> None:
    given = job(spot=True, workers={"replica_count": 1})
    before = json.dumps(given)
    compose_request(given)
    assert json.dumps(given) == before
