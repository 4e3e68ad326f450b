"""The process groups of `make test` (tests/scheduling.py) name files that exist, and every file
that uses a grouped session fixture is in its group: otherwise that fixture is made twice."""

from __future__ import annotations

import re
from pathlib import Path

from tests.scheduling import FILE_GROUPS, GROUP_OF, FileGroupScheduling

ROOT = Path(__file__).resolve().parents[2]
# The session fixtures a group exists for, and the group that must hold every file using one.
SHARED = {"survival_stack": "survival-stack", "survival_api": "survival-stack",
          "single_run": "trainers-reference-runs", "strategy_group": "trainers-reference-runs",
          "mesh_runs": "trainers-jax-meshes"}


def test_every_grouped_file_exists_and_is_in_one_group() -> None:
    paths = [path for group in FILE_GROUPS.values() for path in group]
    assert len(paths) == len(set(paths))
    assert [p for p in paths if not (ROOT / p).is_file()] == []


def test_every_test_file_using_a_shared_session_fixture_is_in_its_group() -> None:
    misplaced = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path.parent.name == "house":
            continue
        relative = path.relative_to(ROOT).as_posix()
        text = path.read_text()
        for fixture, group in SHARED.items():
            if re.search(rf"\b{fixture}\b", text) and GROUP_OF.get(relative) != group:
                misplaced.append((relative, fixture, group))
    assert misplaced == []


def test_a_groups_files_are_one_unit_and_other_files_their_own() -> None:
    split = FileGroupScheduling._split_scope
    assert split(None, "tests/trainers/test_resume.py::test_x[a]") == "trainers-reference-runs"
    assert split(None, "tests/trainers/test_train_ddp.py::test_y") == "trainers-reference-runs"
    assert split(None, "tests/runs/test_api.py::T::test_z") == "tests/runs/test_api.py"
