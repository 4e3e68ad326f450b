"""What the JAX trainer prints is what the control plane reads: every stdout line goes through
Cloud Logging's JSON -> Struct conversion and the control plane's own parser
(vertexplan.logparse.events), as it would on Vertex."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from google.protobuf import json_format, struct_pb2

from contract.events import validate
from tests.trainers.jax.conftest import CHECKPOINTED_MESH, STEPS
from vertexplan.logparse.entries import SEVERITY_NUMBERS, LogEntry
from vertexplan.logparse.events import TIMELINE_EVENTS, ParsedEntry, parse, step_values

pytestmark = pytest.mark.trainers

CONTRACT = TIMELINE_EVENTS | {"step"}


def as_logged(line: str, index: int) -> ParsedEntry:
    """The line as Cloud Logging stores it (severity lifted, numbers through a Struct)."""
    payload = json.loads(line)
    severity = SEVERITY_NUMBERS[payload.pop("severity")]
    struct = struct_pb2.Struct()
    struct.update(payload)
    entry = LogEntry(
        insert_id=str(index),
        timestamp=datetime.now(UTC),
        severity=severity,
        job_id="1",
        task_name="workerpool0-0",
        json_payload=json_format.MessageToDict(struct),
    )
    return parse(entry)


def parsed_events(lines: list[str]) -> list[ParsedEntry]:
    assert all(line.startswith("{") for line in lines), "every stdout line is a JSON event"
    return [as_logged(line, i) for i, line in enumerate(lines)]


def test_a_run_s_lines_are_contract_events_the_control_plane_reads(mesh_runs):
    result, _ = mesh_runs[CHECKPOINTED_MESH]
    parsed = parsed_events(result.stdout_lines)
    assert [validate(json.loads(line)) for line in result.stdout_lines] == \
        [[]] * len(result.stdout_lines)  # as the contract (contract/events.py) says
    names = [p.event for p in parsed]
    assert set(names) <= CONTRACT, set(names) - CONTRACT
    assert names[0] == "run_started" and names[-1] == "run_finished"
    steps = [p for p in parsed if p.is_step]
    assert [p.step for p in steps] == list(range(1, STEPS + 1))
    for p in steps:
        values = step_values(p)
        assert all(v is not None and v > 0 for v in values.values()), values
        assert p.fields["total_steps"] == STEPS
    assert not any(p.scan for p in parsed)  # no line offered to failure diagnosis
    started = parsed[0].fields
    assert isinstance(started["params"], int) and started["resumed_from_step"] is None
    checkpoints = [p for p in parsed if p.event == "checkpoint_saved"]
    assert [(p.step, p.fields["bytes"] > 0) for p in checkpoints] == [(10, True), (20, True)]
    # jit's compile of the first step, by JAX's own clock, printed before that step's event
    # (trainers/jax/compile_time.py): goodput's `compile`, exact.
    compiles = [i for i, p in enumerate(parsed) if p.event == "phase"
                and p.fields["phase"] == "compile"]
    assert len(compiles) == 1 and parsed[compiles[0] + 1].step == 1
    assert 0 < parsed[compiles[0]].fields["seconds"] <= steps[0].fields["step_time_s"]


def test_preemption_and_resume_read_as_timeline_events(interrupted):
    stopped = parsed_events(interrupted.stopped.stdout_lines)
    assert [p.event for p in stopped if p.is_timeline_event][-2:] == [
        "checkpoint_saved", "preempted"]
    preempted = stopped[-1]
    assert preempted.event == "preempted" and preempted.step == interrupted.preempted["step"]
    resumed = parsed_events(interrupted.resumed.stdout_lines)
    assert [p.event for p in resumed if p.is_timeline_event][:2] == ["run_started", "resumed"]
    assert resumed[1].step == preempted.step
