"""The event validator: a record the contract describes passes; each missing required field,
each value of the wrong kind and each unknown event is named; fields the contract does not
name are allowed, and numbers read back from Cloud Logging (floats) stand for integers."""

from __future__ import annotations

from typing import Any

import pytest

from contract import events
from contract.events import (
    COUNT,
    EVENTS,
    FLAG,
    NUMBER,
    PER_RANK_SECONDS,
    SECONDS,
    TEXT,
    MapOf,
    validate,
    validate_line,
)

# A value of each kind, and one of a kind it is not.
GOOD = {COUNT: 3, NUMBER: 0.25, TEXT: "x", FLAG: True, SECONDS: 1.5,
        PER_RANK_SECONDS: [0.5, 0.75]}
WRONG = {COUNT: "3", NUMBER: "0.25", TEXT: 3, FLAG: "yes", SECONDS: -0.5,
         PER_RANK_SECONDS: [0.5, -1]}


def good_value(field: events.Field) -> Any:
    if field.choices:
        return field.choices[0]
    if isinstance(field.kind, MapOf):
        return {"a": GOOD[field.kind.value]}
    if field.kind is events.OBJECT:
        return {"source": "corpus.txt"}
    return GOOD[field.kind]


def wrong_value(field: events.Field) -> Any:
    if isinstance(field.kind, MapOf) or field.kind is events.OBJECT:
        return [1]
    return WRONG[field.kind]


def full(event: events.Event) -> dict[str, Any]:
    return {"severity": "INFO", "message": "m", "event": event.name,
            **{f.name: good_value(f) for f in event.fields}}


def minimal(event: events.Event) -> dict[str, Any]:
    return {"event": event.name, **{f.name: good_value(f) for f in event.fields if f.required}}


FIELDS = [(e.name, f.name) for e in EVENTS.values() for f in e.fields]
REQUIRED = [(e.name, name) for e in EVENTS.values() for name in e.required]


@pytest.mark.parametrize("name", sorted(EVENTS))
def test_a_record_with_every_field_passes_and_so_does_one_with_only_the_required(
        name: str) -> None:
    assert validate(full(EVENTS[name])) == []
    assert validate(minimal(EVENTS[name])) == []
    assert validate({**minimal(EVENTS[name]), "my_own_field": [1, {"x": None}]}) == []


@pytest.mark.parametrize(("name", "field"), REQUIRED)
def test_a_missing_required_field_is_named(name: str, field: str) -> None:
    record = full(EVENTS[name])
    del record[field]
    assert validate(record) == [f"{name}: {field} is required"]


@pytest.mark.parametrize(("name", "field"), FIELDS)
def test_a_field_of_the_wrong_kind_is_named(name: str, field: str) -> None:
    spec = {f.name: f for f in EVENTS[name].fields}[field]
    problems = validate({**full(EVENTS[name]), field: wrong_value(spec)})
    assert len(problems) == 1 and problems[0].startswith(f"{name}: {field} must be "), problems
    null = validate({**full(EVENTS[name]), field: None})
    refused = [f"{name}: {field} must be {spec.kind.said}, got null"]
    assert null == ([] if spec.nullable else refused)


def test_the_required_fields_are_what_the_control_plane_cannot_do_without() -> None:
    required = {name: event.required for name, event in EVENTS.items() if event.required}
    assert required == {
        "run_started": ("rank",), "step": ("step",), "eval": ("step", "metrics"),
        "checkpoint_saved": ("step", "path"), "checkpoint_deleted": ("path",),
        "resumed": ("step", "path"), "preempted": ("step",),
        "tracking": ("provider", "run_url"), "run_finished": ("step",), "error": ("message",),
        "phase": ("phase", "seconds"),
    }


def test_the_design_tables_fields_are_all_in_the_contract() -> None:
    design = {
        "run_started": "rank world_size strategy dims params resumed_from_step",
        "step": "step total_steps loss lr tokens_per_s step_time_s",
        "checkpoint_saved": "step path bytes seconds",
        "checkpoint_deleted": "step path", "resumed": "step path",
        "preempted": "signal step checkpoint_path", "eval": "step metrics",
        "tracking": "provider run_url", "run_finished": "step final_loss wall_s",
    }
    for name, fields in design.items():
        assert EVENTS[name].read
        assert set(fields.split()) <= {f.name for f in EVENTS[name].fields}, name
    assert events.TIMELINE_EVENTS | {"step", "tracking", "error"} == {
        name for name, event in EVENTS.items() if event.read}


def test_numbers_read_back_from_cloud_logging_stand_for_integers() -> None:
    # A protobuf Struct hands every JSON number back as a float.
    assert validate({"event": "step", "step": 5.0, "total_steps": 300.0, "loss": 2.5}) == []
    assert validate({"event": "run_started", "rank": 0.0, "dims": {"dp": 2.0, "tp": 1.0}}) == []
    assert validate({"event": "step", "step": 5.5}) == [
        "step: step must be an integer of 0 or more, got 5.5 (a number)"]
    assert validate({"event": "step", "step": -1}) == [
        "step: step must be an integer of 0 or more, got -1 (a number)"]
    assert validate({"event": "step", "step": True}) == [
        "step: step must be an integer of 0 or more, got True (a boolean)"]
    assert validate({"event": "step", "step": 10**400}) == []  # no float overflow


def test_non_finite_numbers_are_refused_where_the_trainers_print_null() -> None:
    assert validate({"event": "step", "step": 1, "loss": None, "lr": None}) == []
    assert validate({"event": "step", "step": 1, "loss": float("nan"),
                     "lr": float("inf")}) == [
        "step: loss must be a finite number or null, got nan (a number)",
        "step: lr must be a finite number or null, got inf (a number)"]


def test_values_inside_an_object_are_named_by_their_key() -> None:
    assert validate({"event": "eval", "step": 10, "metrics": {"val_loss": None,
                                                              "acc": 0.5}}) == []
    assert validate({"event": "eval", "step": 10, "metrics": {"val_loss": "low"}}) == [
        "eval: metrics['val_loss'] must be a finite number or null, got 'low' (a string)"]
    assert validate({"event": "run_started", "rank": 0, "dims": {"dp": 1.5}}) == [
        "run_started: dims['dp'] must be an integer of 0 or more, got 1.5 (a number)"]


def test_choices_are_named() -> None:
    assert validate({"event": "tracking", "provider": "mlflow", "run_url": ""}) == [
        "tracking: provider must be one of tensorboard, vertex_experiments, wandb, got 'mlflow'"]
    assert validate({"event": "step", "step": 1, "severity": "info"})[0].startswith(
        "step: severity must be one of DEFAULT, DEBUG, INFO,")


def test_what_is_no_event_is_said_so() -> None:
    assert validate([1, 2]) == ["an event is a JSON object, got an array"]
    assert validate({"message": "hello"}) == [
        'event is required: the name of the event (e.g. "step")']
    assert validate({"event": ""}) == ["event must be a non-empty string, got '' (a string)"]
    assert validate({"event": 7}) == ["event must be a non-empty string, got 7 (a number)"]
    [unknown] = validate({"event": "chekpoint_saved"})
    assert unknown.startswith("event 'chekpoint_saved' is not one of the contract's: ")
    assert "checkpoint_saved" in unknown


def test_a_printed_line_is_one_json_object() -> None:
    assert validate_line('{"event": "resumed", "step": 10, "path": "gs://b/x"}') == []
    [problem] = validate_line("step 10 loss 2.5")
    assert problem.startswith("not a JSON line: ")
    assert validate_line('"step"') == ["an event is a JSON object, got a string"]


def test_the_events_that_name_paths_are_those_the_control_plane_checks() -> None:
    assert dict(events.PATH_FIELDS) == {
        "checkpoint_saved": ("path",), "checkpoint_deleted": ("path",), "resumed": ("path",),
        "preempted": ("checkpoint_path",), "run_started": ("resumed_from", "resume_path"),
        "run_finished": ("model_path", "path"),
    }
    assert set(events.READ_AS_INTEGERS) <= {f.name for e in EVENTS.values() for f in e.fields
                                            if f.kind is COUNT}


def test_a_phase_names_one_of_the_phases_and_lasts_zero_seconds_or_more() -> None:
    assert validate({"event": "phase", "phase": "checkpoint_save", "seconds": 2.5,
                     "step": 40.0}) == []
    assert validate({"event": "phase", "phase": "compile", "seconds": 0}) == []
    assert validate({"event": "phase", "phase": "lunch", "seconds": 1}) == [
        "phase: phase must be one of data_wait, checkpoint_save, restore, compile, eval, "
        "got 'lunch'"]
    assert validate({"event": "phase", "phase": "eval", "seconds": -1}) == [
        "phase: seconds must be a finite number of 0 or more, got -1 (a number)"]
