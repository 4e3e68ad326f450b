"""`vcp`'s table output, for people: money in dollars, severities by name, nested answers one
field a line, how long a job ran; JSON and YAML stay as the API answered, for scripts."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta

from click.testing import CliRunner

from vcp import output


def test_money_is_printed_in_dollars_under_a_heading_that_says_so() -> None:
    text = output.table([{"name": "a", "hourly_micros": 709057},
                         {"name": "b", "hourly_micros": 12_345_678_900},
                         {"name": "c", "hourly_micros": 1234}], ("name", "hourly_micros"))
    head, *rows = text.splitlines()
    assert head.split() == ["NAME", "HOURLY", "($)"]
    assert [r.split()[1] for r in rows] == ["$0.71", "$12,345.68", "$0.001234"]
    assert "709057" not in text


def test_a_nested_answer_is_one_field_a_line() -> None:
    verdict = {"valid": False, "world_size": 4, "warnings": {"model.parameters": ["big"]},
               "hints": ["one", "two"],
               "estimate": {"hourly_micros": 2_500_000, "per_rate": {"spot_micros": 1_000_000}}}
    lines = output.fields(verdict).splitlines()
    assert [re.split(r"\s{2,}", line) for line in lines] == [
        ["valid", "False"],
        ["world_size", "4"],
        ["warnings.model.parameters", "big"],
        ["hints", "one, two"],
        ["estimate.hourly ($)", "$2.50"],
        ["estimate.per_rate.spot ($)", "$1.00"],
    ]
    # Values line up in one column.
    assert len({len(re.match(r"\S+\s+", line).group(0)) for line in lines[:4]}) == 1
    assert not any("{" in line for line in lines)


def test_severity_numbers_are_named() -> None:
    assert output.cell(200, "severity") == "INFO"
    assert output.cell(500, "severity") == "ERROR"
    assert output.cell(200, "step") == "200"


def test_a_job_row_says_how_long_it_ran_and_the_wait_ends_with_what_it_cost() -> None:
    start = datetime(2026, 11, 29, 8, 0, tzinfo=UTC)
    row = {"id": 7, "state": "SUCCEEDED", "started_at": start.isoformat(),
           "ended_at": (start + timedelta(minutes=3, seconds=12)).isoformat().replace(
               "+00:00", "Z"),
           "cost": {"billed_micros": 21_500, "lost_micros": 0}}
    assert output.table([row], ("id", "duration")).splitlines()[1].split() == ["7", "3m12s"]
    assert output.ending("job 7", row) == "job 7 ended SUCCEEDED, after 3m12s, billed $0.02"
    running = {"state": "RUNNING", "started_at": (datetime.now(UTC) - timedelta(hours=2,
                                                                              minutes=5)).isoformat()}
    assert output.fields(running, ("state", "duration")).splitlines()[1].split()[1] == "2h05m"


def test_json_and_yaml_keep_the_apis_integers() -> None:
    data = {"hourly_micros": 709057, "severity": 200}

    def run(fmt: str) -> str:
        return CliRunner().invoke(_emit_command(data, fmt)).output

    assert json.loads(run("json")) == data
    assert "hourly_micros: 709057" in run("yaml")


def _emit_command(data: dict, fmt: str):  # type: ignore[no-untyped-def]
    import click

    @click.command()
    def command() -> None:
        output.emit(data, fmt)

    return command
