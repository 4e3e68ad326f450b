"""Every event record the tests of the log readers feed the control plane is one the contract
accepts: the readers are tested on what trainers may really print. A few records are malformed
on purpose (to show the parser's tolerance); for those the validator must name what is wrong.

The records are read from the test files themselves: each dict literal with an "event" key (in
the tests' code, or in a program a test runs, held in a string), and each JSON object with an
"event" key in a string (a line as a replica prints it). A value the test computes (a name, a
call) is not known here, so only its presence is judged; an f-string is a string."""

from __future__ import annotations

import ast
import json
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from contract.events import validate

ROOT = Path(__file__).resolve().parents[2]
# The tests of what reads trainers' events: the log follower and store, the parser, the Ray
# job output, the sweeps' trial logs, and the attacks that forge events.
READERS = ("tests/logs", "tests/vertexplan/logparse", "tests/vertexplan/clusters",
           "tests/clusters", "tests/sweeps", "tests/security")
# file -> {record as JSON: the problems the validator must name}
MALFORMED_ON_PURPOSE = {
    "tests/vertexplan/logparse/test_events.py": {
        '{"event": "step", "step": 1, "loss": "nan", "lr": true}': [
            "step: loss must be a finite number or null, got 'nan' (a string)",
            "step: lr must be a finite number or null, got True (a boolean)"]},
    "tests/vertexplan/logparse/test_prefilter.py": {
        '{"event": "step"}': ["step: step is required"]},
    "tests/vertexplan/logparse/test_failures.py": {
        '{"event": "step"}': ["step: step is required"]},
}


@dataclass(frozen=True)
class Found:
    where: str
    record: dict[str, Any]
    unknown: frozenset[str]    # fields whose value the test computes
    open_ended: bool = False   # the literal also splats other fields in (**fields)


def _value(node: ast.expr) -> tuple[bool, Any]:
    if isinstance(node, ast.JoinedStr):
        return True, "f-string"
    try:
        return True, ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False, None


def _json_object(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    if start < 0 or '"event"' not in text:
        return None
    try:
        value = json.loads(text[start:])
    except ValueError:
        return None
    return value if isinstance(value, dict) and "event" in value else None


def _is_python(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def records_in(source: str, where: str) -> Iterator[Found]:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Dict):
            keys = [k.value if isinstance(k, ast.Constant) else None for k in node.keys]
            if "event" not in keys:
                continue
            record, unknown = {}, set()
            for key, value in zip(keys, node.values, strict=True):
                if key is None:
                    continue
                known, evaluated = _value(value)
                if known:
                    record[key] = evaluated
                else:
                    unknown.add(key)
            yield Found(f"{where}:{node.lineno}", record, frozenset(unknown),
                        open_ended=None in node.keys)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = _json_object(node.value)
            if found is not None:
                yield Found(f"{where}:{node.lineno}", found, frozenset())
            elif "event" in node.value and "\n" in node.value:
                program = textwrap.dedent(node.value)
                if _is_python(program):  # a program the test runs: its own literals
                    yield from records_in(program, f"{where}:{node.lineno}")


def judged(found: Found) -> list[str]:
    problems = validate(found.record)
    name = found.record.get("event")
    return [p for p in problems
            if not any(p.startswith(f"{name}: {field} ") for field in found.unknown)
            and not (found.open_ended and p.endswith(" is required"))]


def fixtures() -> list[tuple[str, Found]]:
    out = []
    for folder in READERS:
        for path in sorted((ROOT / folder).rglob("test_*.py")):
            rel = path.relative_to(ROOT).as_posix()
            out.extend((rel, found) for found in records_in(path.read_text(), rel))
    return out


FIXTURES = fixtures()


def test_the_scan_finds_the_readers_fixtures() -> None:
    files = {rel for rel, _ in FIXTURES}
    assert len(FIXTURES) >= 40, len(FIXTURES)
    assert {"tests/logs/test_trust.py", "tests/logs/test_mfu_series.py",
            "tests/logs/test_api_and_page.py", "tests/vertexplan/logparse/test_events.py",
            "tests/vertexplan/clusters/test_ray_logs.py",
            "tests/sweeps/test_trial_jobs.py"} <= files
    kinds = {found.record["event"] for _, found in FIXTURES}
    assert {"run_started", "step", "checkpoint_saved", "checkpoint_deleted", "resumed",
            "preempted", "tracking", "run_finished", "error"} <= kinds, kinds


@pytest.mark.parametrize(("rel", "found"), FIXTURES, ids=[f.where for _, f in FIXTURES])
def test_every_event_fixture_of_the_log_readers_validates(rel: str, found: Found) -> None:
    expected = MALFORMED_ON_PURPOSE.get(rel, {}).get(json.dumps(found.record), [])
    assert judged(found) == expected, found.record


def test_the_malformed_fixtures_are_still_there() -> None:
    """The list above names real fixtures: one that is fixed or gone leaves the list."""
    present = {(rel, json.dumps(found.record)) for rel, found in FIXTURES}
    for rel, records in MALFORMED_ON_PURPOSE.items():
        for record in records:
            assert (rel, record) in present, (rel, record)
