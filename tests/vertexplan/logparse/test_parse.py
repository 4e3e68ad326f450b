"""The pure parser: which lines become metrics, which may report a failure."""

from __future__ import annotations

from datetime import UTC, datetime

from vertexplan.logparse import events
from vertexplan.logparse.entries import LogEntry


def entry(severity: int = 200, text: str | None = None, payload: dict | None = None) -> LogEntry:
    return LogEntry(insert_id="1", timestamp=datetime(2026, 1, 1, tzinfo=UTC), severity=severity,
                    job_id="42", task_name="workerpool0-0", json_payload=payload,
                    text_payload=text)


def test_failures_are_looked_for_in_every_line_but_the_contract_s_own_events() -> None:
    assert events.parse(entry(500, text="Traceback (most recent call last):")).scan
    assert events.parse(entry(400, text="NCCL WARN something")).scan
    assert events.parse(entry(0, text="no severity given")).scan
    # stdout is INFO on Vertex: a traceback printed there is still a traceback.
    assert events.parse(entry(200, text="torch.OutOfMemoryError: CUDA out of memory.")).scan
    assert events.parse(entry(200, payload={"message": "a user's own JSON line"})).scan
    error = events.parse(entry(500, payload={"event": "error", "message": "ValueError: x"}))
    assert error.scan and error.event == "error"
    step = events.parse(entry(500, payload={"event": "step", "step": 1.0, "message": "s"}))
    assert not step.scan


def test_throughput_may_be_reported_per_sample() -> None:
    parsed = events.parse(entry(payload={"event": "step", "step": 3.0, "samples_per_s": 120.0,
                                         "loss": 1.5}))
    assert events.step_values(parsed) == {"loss": 1.5, "lr": None, "tokens_per_s": 120.0,
                                          "step_time_s": None}
