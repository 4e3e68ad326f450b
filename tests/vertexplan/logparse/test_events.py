from __future__ import annotations

from datetime import UTC, datetime

from vertexplan.logparse import events
from vertexplan.logparse.entries import LogEntry


def entry(json_payload: dict | None = None, text: str | None = None) -> LogEntry:
    return LogEntry(insert_id="1", timestamp=datetime(2026, 1, 1, tzinfo=UTC), severity=200,
                    job_id="42", task_name="workerpool0-0", json_payload=json_payload,
                    text_payload=text)


def test_step_event_with_float_integers_from_struct() -> None:
    parsed = events.parse(entry({"event": "step", "severity": "INFO", "message": "step 5",
                                 "step": 5.0, "total_steps": 300.0, "loss": 2.5, "lr": 1e-3,
                                 "tokens_per_s": 1000.0, "step_time_s": 0.02}))
    assert parsed.is_step and parsed.step == 5 and parsed.fields["total_steps"] == 300
    assert events.step_values(parsed) == {"loss": 2.5, "lr": 1e-3, "tokens_per_s": 1000.0,
                                          "step_time_s": 0.02}
    assert parsed.message == "step 5"


def test_run_started_model_shape_arrives_as_integers() -> None:
    # Through protobuf Struct every number is a float; MFU needs the shape as integers.
    parsed = events.parse(entry({"event": "run_started", "rank": 0.0, "params": 120_000.0,
                                 "n_layer": 2.0, "n_head": 2.0, "d_model": 64.0,
                                 "seq_len": 64.0, "precision": "bf16"}))
    assert parsed.is_timeline_event
    assert {k: parsed.fields[k] for k in ("params", "n_layer", "n_head", "d_model", "seq_len")
            } == {"params": 120_000, "n_layer": 2, "n_head": 2, "d_model": 64, "seq_len": 64}
    assert all(type(parsed.fields[k]) is int for k in ("params", "n_layer", "seq_len"))


def test_timeline_events_and_plain_lines() -> None:
    saved = events.parse(entry({"event": "checkpoint_saved", "step": 50.0, "path": "/x",
                                "bytes": 10.0, "seconds": 0.1}))
    assert saved.is_timeline_event and saved.step == 50 and saved.fields["path"] == "/x"
    plain = events.parse(entry(text="NCCL WARN something\n"))
    assert plain.event is None and plain.message == "NCCL WARN something"
    other_json = events.parse(entry({"a": 1}))
    assert other_json.event is None and other_json.message == '{"a": 1}'


def test_restart_lines_from_the_platform() -> None:
    parsed = events.parse(entry(text="Restarting replica workerpool0-0 (restart 1 of 5)"))
    assert parsed.event == "replica_restarted"


def test_non_finite_and_wrong_types_are_not_metrics() -> None:
    parsed = events.parse(entry({"event": "step", "step": 1, "loss": "nan", "lr": True}))
    assert events.step_values(parsed)["loss"] is None
    assert events.step_values(parsed)["lr"] is None
