"""The process groups of `make test` (tests/scheduling.py) name files that exist, and every file
that uses a grouped session fixture is in its group: otherwise that fixture is made twice."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.scheduling import (
    FILE_GROUPS,
    GROUP_OF,
    SECONDS,
    FileGroupScheduling,
    pytest_collection_modifyitems,
)

ROOT = Path(__file__).resolve().parents[2]
# The session fixtures a group exists for, and the group that must hold every file using one.
SHARED = {"survival_stack": "survival-stack", "survival_api": "survival-stack",
          "single_run": "trainers-reference-runs", "strategy_group": "trainers-reference-runs",
          "mesh_runs": "trainers-jax-meshes"}


def test_every_grouped_file_exists_and_is_in_one_group() -> None:
    paths = [path for group in FILE_GROUPS.values() for path in group]
    assert len(paths) == len(set(paths))
    assert [p for p in paths if not (ROOT / p).is_file()] == []


def test_every_timed_file_exists() -> None:
    assert [p for p in SECONDS if not (ROOT / p).is_file()] == []


def test_every_test_file_using_a_shared_session_fixture_is_in_its_group() -> None:
    misplaced = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path.parent.name == "house":
            continue
        relative = path.relative_to(ROOT).as_posix()
        text = path.read_text()
        for fixture, group in SHARED.items():
            # A fixture is used where a test or fixture function takes it as a parameter (or
            # asks for it by name); the module tests/trainers/strategy_group.py, run as a
            # program of its own, shares nothing with the session's fixture of that name.
            used = re.search(rf"def \w+\([^)]*\b{fixture}\b", text) or re.search(
                rf"getfixturevalue\(\s*[\"']{fixture}[\"']", text)
            if used and GROUP_OF.get(relative) != group:
                misplaced.append((relative, fixture, group))
    assert misplaced == []


def test_a_groups_files_are_one_unit_and_other_files_their_own() -> None:
    split = FileGroupScheduling._split_scope
    assert split(None, "tests/trainers/test_resume.py::test_x[a]") == "trainers-reference-runs"
    assert split(None, "tests/trainers/test_train_ddp.py::test_y") == "trainers-reference-runs"
    assert split(None, "tests/runs/test_api.py::T::test_z") == "tests/runs/test_api.py"


class _Item:
    """What the ordering reads of a collected test: its id, whether it drives a stack and
    its fixtures (the session's shared `stack` among them or not)."""

    def __init__(self, nodeid: str, stack: bool = False, *fixtures: str) -> None:
        self.nodeid = nodeid
        self.stack = stack
        self.fixturenames = ["request", *fixtures]

    def get_closest_marker(self, name: str) -> object:
        return pytest.mark.stack if name == "stack" and self.stack else None


def test_stack_units_come_last_and_long_units_first_with_a_units_tests_together() -> None:
    items = [
        _Item("tests/runs/test_api.py::test_a"),
        _Item("tests/integration/test_api_contract.py::test_schema", True, "stack"),
        _Item("tests/trainers/test_resume.py::test_r"),
        _Item("tests/integration/test_demo.py::test_demo", True, "stack"),
        _Item("tests/serving/test_serve.py::test_s1"),
        _Item("tests/runs/test_api.py::test_b"),
        _Item("tests/trainers/test_train_ddp.py::test_d"),
        _Item("tests/serving/test_serve.py::test_s2", True, "api", "stack"),
        _Item("tests/integration/test_ray_clusters.py::test_c", True, "survival_stack"),
    ]
    pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert [item.nodeid for item in items] == [
        # the reference-run group (its files' seconds summed) before test_serve.py alone
        "tests/trainers/test_resume.py::test_r",
        "tests/trainers/test_train_ddp.py::test_d",
        "tests/runs/test_api.py::test_a",
        "tests/runs/test_api.py::test_b",
        # a stack of its own before the session's shared one, however long the others are
        "tests/integration/test_ray_clusters.py::test_c",
        # the longest first; a file with one stack test is a stack unit, whole
        "tests/integration/test_api_contract.py::test_schema",
        "tests/serving/test_serve.py::test_s1",
        "tests/serving/test_serve.py::test_s2",
        "tests/integration/test_demo.py::test_demo",
    ]
