"""How `make test` spreads the suite over its processes: a test file runs whole on one process
(its module fixtures start once), and the files named together here run on the same one, as
they share a session fixture too costly to make twice (a reference training run, a set of JAX
meshes, the survival stack). A plugin of the root conftest, used with `--dist loadfile`.

The groups are named by file here, not by pytest-xdist's `xdist_group` marks: under pytest 9
those no longer group anything (pytest-xdist 3.8 writes the group into `item._nodeid`, which
pytest 9's `nodeid` no longer reads), and the process that schedules sees test ids only."""

from __future__ import annotations

from typing import Any

import pytest
from xdist.scheduler import LoadFileScheduling

FILE_GROUPS: dict[str, tuple[str, ...]] = {
    # tests/trainers/conftest.py: the single-process, DDP and tp x pp reference runs, and the
    # strategy group's runs (tests/trainers/strategy_group.py), which are held to the first.
    "trainers-reference-runs": (
        "tests/trainers/test_train_single.py", "tests/trainers/test_train_ddp.py",
        "tests/trainers/test_tensor_pipeline.py", "tests/trainers/test_preemption.py",
        "tests/trainers/test_resume.py", "tests/trainers/test_strategies.py",
        "tests/trainers/test_sharded_preemption.py", "tests/trainers/test_serving_sharded.py"),
    # tests/trainers/jax/conftest.py: the mesh runs.
    "trainers-jax-meshes": (
        "tests/trainers/jax/test_meshes.py", "tests/trainers/jax/test_multihost.py",
        "tests/trainers/jax/test_events.py"),
    # tests/stacks.py: the survival stack.
    "survival-stack": (
        "tests/integration/survival/test_jobs_survive.py",
        "tests/integration/survival/test_preemption_cost.py",
        "tests/integration/survival/test_spot_recovery.py",
        "tests/integration/survival/test_service_restarts.py"),
}
GROUP_OF = {path: group for group, paths in FILE_GROUPS.items() for path in paths}


class FileGroupScheduling(LoadFileScheduling):
    """pytest-xdist's file scheduling, with the files of a group as one unit of work."""

    def _split_scope(self, nodeid: str) -> str:
        path = nodeid.split("::", 1)[0]
        return GROUP_OF.get(path, path)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None
    return FileGroupScheduling(config, log)
