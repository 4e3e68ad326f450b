"""Sweep requests -> HyperparameterTuningJobs: the study's rules, the trial job composed with
every composer rule, export and import both ways, and the sweep's estimated cost."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from vertexplan.interop import ImportFailed
from vertexplan.pricing.job_estimate import for_duration, hourly
from vertexplan.sweeps import compose_sweep, estimate, export, import_text

TRIAL = {"args": ["--preset", "tiny", "--steps", "4"], "chief": {"machine_type": "n1-standard-4"}}


def sweep(**changes):
    request = {
        "display_name": "lr-warmup",
        "metrics": [{"metric_id": "val_loss", "goal": "MINIMIZE"}],
        "parameters": [
            {"parameter_id": "lr", "type": "DOUBLE", "min_value": 1e-4, "max_value": 1e-2,
             "scale_type": "UNIT_LOG_SCALE"},
            {"parameter_id": "warmup_steps", "type": "INTEGER", "min_value": 0,
             "max_value": 4},
            {"parameter_id": "optimizer", "type": "CATEGORICAL", "values": ["adamw", "sgd"],
             "conditional_parameters": [{"parent_values": ["sgd"], "parameter": {
                 "parameter_id": "momentum", "type": "DISCRETE", "values": [0.5, 0.9]}}]},
        ],
        "algorithm": "RANDOM_SEARCH",
        "max_trial_count": 6, "parallel_trial_count": 2, "max_failed_trial_count": 1,
        "trial_job": TRIAL,
    }
    request.update(changes)
    return request


def test_a_sweep_composes_to_a_tuning_job() -> None:
    composed = compose_sweep(sweep())
    assert composed.ok, composed.errors
    job = composed.tuning_job
    assert job["displayName"] == "lr-warmup"
    counts = (job["maxTrialCount"], job["parallelTrialCount"], job["maxFailedTrialCount"])
    assert counts == (6, 2, 1)
    study = job["studySpec"]
    assert study["metrics"] == [{"metricId": "val_loss", "goal": "MINIMIZE"}]
    assert study["algorithm"] == "RANDOM_SEARCH"
    lr, warmup, optimizer = study["parameters"]
    assert lr == {"parameterId": "lr", "doubleValueSpec": {"minValue": 1e-4, "maxValue": 1e-2},
                  "scaleType": "UNIT_LOG_SCALE"}
    assert warmup["integerValueSpec"] == {"minValue": "0", "maxValue": "4"}  # int64 as JSON
    child = optimizer["conditionalParameterSpecs"][0]
    assert child["parentCategoricalValues"] == {"values": ["sgd"]}
    assert child["parameterSpec"]["discreteValueSpec"] == {"values": [0.5, 0.9]}
    # The trial job is the composer's CustomJobSpec, the trainer's arguments included.
    pool = job["trialJobSpec"]["workerPoolSpecs"][0]
    assert pool["machineSpec"]["machineType"] == "n1-standard-4"
    assert "--steps" in pool["containerSpec"]["args"]


@pytest.mark.parametrize(("changes", "field", "words"), [
    ({"metrics": []}, "metrics", "at least one metric"),
    ({"metrics": [{"metric_id": "val loss; rm", "goal": "MINIMIZE"}]}, "metrics[0].metric_id",
     "letters, digits"),
    ({"metrics": [{"metric_id": "val_loss", "goal": "LOWER"}]}, "metrics[0].goal", "MINIMIZE"),
    ({"algorithm": "BAYES"}, "algorithm", "GRID_SEARCH"),
    ({"max_trial_count": 0}, "max_trial_count", "from 1"),
    ({"parallel_trial_count": 7}, "parallel_trial_count", "at most max_trial_count"),
    ({"max_failed_trial_count": -1}, "max_failed_trial_count", "from 0"),
    ({"display_name": ""}, "display_name", "1 to 128"),
])
def test_a_bad_study_names_the_field(changes, field, words) -> None:
    composed = compose_sweep(sweep(**changes))
    assert not composed.ok
    assert any(words in m for m in composed.errors[field]), composed.errors


def param(**fields):
    return sweep(parameters=[{"parameter_id": "p", **fields}])


@pytest.mark.parametrize(("request_", "field", "words"), [
    (param(type="DOUBLE", min_value=1.0, max_value=0.5), "parameters[0].max_value",
     "at least min_value"),
    (param(type="INTEGER", min_value=0.5, max_value=3), "parameters[0].min_value", "integer"),
    (param(type="DOUBLE", min_value=0.0, max_value=1.0, scale_type="UNIT_LOG_SCALE"),
     "parameters[0].scale_type", "above 0"),
    (param(type="DISCRETE", values=[3, 1]), "parameters[0].values", "ascending"),
    (param(type="INTEGER", min_value=0, max_value=2**70), "parameters[0].max_value", "64 bits"),
    (param(type="INTEGER", min_value=0, max_value=10**15, conditional_parameters=[
        {"parent_values": [10**16], "parameter": {"parameter_id": "q", "type": "DISCRETE",
                                                  "values": [1]}}]),
     "parameters[0].conditional_parameters[0].parent_values", "parent's values"),
    (param(type="DISCRETE", values=list(range(1001))), "parameters[0].values", "at most 1000"),
    (param(type="CATEGORICAL", values=["a", "b"], scale_type="UNIT_LINEAR_SCALE"),
     "parameters[0].scale_type", "no scale type"),
    (param(type="CATEGORICAL", values=["$(rm -rf /)"]), "parameters[0].values", "word"),
    (param(type="FLOAT", min_value=0, max_value=1), "parameters[0].type", "DOUBLE"),
    (sweep(parameters=[{"parameter_id": "--x=1 --y", "type": "DISCRETE", "values": [1]}]),
     "parameters[0].parameter_id", "letters"),
    (sweep(algorithm="GRID_SEARCH"), "parameters[0].type", "GRID_SEARCH"),
    (param(type="DOUBLE", min_value=0.1, max_value=1.0, conditional_parameters=[
        {"parent_values": [0.5], "parameter": {"parameter_id": "q", "type": "DISCRETE",
                                               "values": [1]}}]),
     "parameters[0].conditional_parameters", "cannot be a parent"),
    (param(type="CATEGORICAL", values=["a"], conditional_parameters=[
        {"parent_values": ["b"], "parameter": {"parameter_id": "q", "type": "DISCRETE",
                                               "values": [1]}}]),
     "parameters[0].conditional_parameters[0].parent_values", "parent's values"),
])
def test_a_bad_parameter_names_the_field(request_, field, words) -> None:
    composed = compose_sweep(request_)
    assert any(words in m for m in composed.errors.get(field, [])), composed.errors


def test_the_trial_job_keeps_every_composer_rule() -> None:
    composed = compose_sweep(sweep(trial_job={"chief": {"machine_type": "n1-standard-4",
                                                        "accelerator_type": "NVIDIA_H100_80GB",
                                                        "accelerator_count": 1}}))
    assert any(key.startswith("trial_job.chief") for key in composed.errors), composed.errors
    assert compose_sweep(sweep(trial_job="n1")).errors["trial_job"]


def test_grid_search_warns_when_it_has_fewer_points_than_trials() -> None:
    composed = compose_sweep(sweep(algorithm="GRID_SEARCH", max_trial_count=10, parameters=[
        {"parameter_id": "warmup_steps", "type": "INTEGER", "min_value": 0, "max_value": 2},
        {"parameter_id": "batch_size", "type": "DISCRETE", "values": [4, 8]}]))
    assert composed.ok, composed.errors
    assert "6 points" in composed.warnings["max_trial_count"][0]


@pytest.mark.parametrize("fmt", ["yaml", "json"])
def test_export_then_import_gives_the_same_tuning_job(fmt: str) -> None:
    composed = compose_sweep(sweep())
    text = export(composed.tuning_job, fmt, region="us-central1")
    imported = import_text(text, region="europe-west4", name="lr-warmup")
    assert not imported.errors, imported.errors
    again = compose_sweep(imported.request)
    assert again.ok, again.errors
    assert again.tuning_job == composed.tuning_job
    if fmt == "yaml":
        assert text.startswith("# gcloud ai hp-tuning-jobs create --region=us-central1")
        assert imported.request["region"] == "us-central1"


def test_a_rest_document_as_google_writes_it_imports() -> None:
    document = {
        "displayName": "from-docs",
        "studySpec": {"metrics": [{"metricId": "accuracy", "goal": "MAXIMIZE"}],
                      "parameters": [{"parameterId": "batch_size",
                                      "discreteValueSpec": {"values": [16, 32]},
                                      "scaleType": "UNIT_LINEAR_SCALE"}]},
        "maxTrialCount": "4", "parallelTrialCount": "2",
        "trialJobSpec": {"workerPoolSpecs": [{
            "machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "1",
            "containerSpec": {"imageUri": "gcr.io/p/t:1", "command": ["python", "t.py"]}}]},
    }
    imported = import_text(json.dumps(document), region="us-central1")
    assert imported.request["max_trial_count"] == 4
    composed = compose_sweep(imported.request)
    assert composed.ok, composed.errors
    assert composed.tuning_job["studySpec"] == document["studySpec"]


def test_import_refuses_what_is_not_a_tuning_job() -> None:
    with pytest.raises(ImportFailed, match="studySpec"):
        import_text("workerPoolSpecs: []", region="us-central1")


def test_the_sweep_costs_its_trials() -> None:
    composed = compose_sweep(sweep())
    found = estimate(composed.tuning_job, "us-central1", Decimal("0.5"))
    one = for_duration(hourly(composed.custom_job, "us-central1"), Decimal("0.5"))
    assert found.per_trial == one and one.on_demand > 0
    assert found.total.on_demand == 6 * one.on_demand
    assert isinstance(found.total.on_demand, int)
