"""The job request's tensorboard, experiment and experiment_run: checked resource names that
become the CustomJobSpec's fields, and read back by the form's mapping."""

from __future__ import annotations

import pytest

from tests.vertexplan.composer.helpers import compose_request
from vertexplan.composer import fields

BOARD = "projects/p-1/locations/us-central1/tensorboards/123"
EXPERIMENT = "projects/p-1/locations/us-central1/metadataStores/default/contexts/lr-study"
RUN = "projects/p-1/locations/us-central1/metadataStores/default/contexts/lr-study-run-1"
BASE = {"name": "t", "chief": {"machine_type": "n1-standard-4"}}


def test_they_become_the_job_specs_fields() -> None:
    composed = compose_request({**BASE, "tensorboard": BOARD, "experiment": EXPERIMENT,
                                 "experiment_run": RUN})
    assert composed.ok, composed.errors
    spec = composed.custom_job["jobSpec"]
    assert (spec["tensorboard"], spec["experiment"], spec["experimentRun"]) == \
        (BOARD, EXPERIMENT, RUN)


def test_left_out_they_are_absent() -> None:
    spec = compose_request(BASE).custom_job["jobSpec"]
    assert not {"tensorboard", "experiment", "experimentRun"} & set(spec)


@pytest.mark.parametrize(("changes", "field"), [
    ({"tensorboard": "my-board"}, "tensorboard"),
    ({"tensorboard": BOARD + "/../x"}, "tensorboard"),
    ({"experiment": "projects/p/locations/us-central1/experiments/e"}, "experiment"),
    ({"experiment": EXPERIMENT, "experiment_run": "run-1"}, "experiment_run"),
    ({"experiment_run": RUN}, "experiment_run"),
    ({"tensorboard": 5}, "tensorboard"),
])
def test_a_bad_name_is_refused_on_its_field(changes: dict, field: str) -> None:
    composed = compose_request({**BASE, **changes})
    assert field in composed.errors, composed.errors


def test_the_form_mapping_carries_them_both_ways() -> None:
    request = {**BASE, "tensorboard": BOARD, "experiment": EXPERIMENT, "experiment_run": RUN}
    shown = fields.fields_from_request(request)
    assert (shown["tensorboard"], shown["experiment"], shown["experiment_run"]) == \
        (BOARD, EXPERIMENT, RUN)
    assert "tensorboard" not in fields.leftovers(request)
