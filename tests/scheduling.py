"""How `make test` spreads the suite over its processes: a test file runs whole on one process
(its module fixtures start once), and the files named together here run on the same one, as
they share a session fixture too costly to make twice (a reference training run, a set of JAX
meshes, the survival stack). A plugin of the root conftest, used with `--dist loadfile`.

The groups are named by file here, not by pytest-xdist's `xdist_group` marks: under pytest 9
those no longer group anything (pytest-xdist 3.8 writes the group into `item._nodeid`, which
pytest 9's `nodeid` no longer reads), and the process that schedules sees test ids only.

The order: the tests that drive a stack last (a stack starts with its first test and runs
until its scope ends, so with them together a run's stacks live while they are used, not idle
beside the other tests), and within each part the longest units of work first, so the two
processes end together instead of one finishing a long file alone. pytest-xdist would order
files by their number of tests, which says little of their time: that is turned off, and the
collection is ordered here (the same order on every process, as pytest-xdist requires).
"""

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
        "tests/trainers/test_sharded_preemption.py", "tests/trainers/test_serving_sharded.py",
        "tests/trainers/test_rank_step_times.py"),
    # tests/trainers/jax/conftest.py: the mesh runs.
    "trainers-jax-meshes": (
        "tests/trainers/jax/test_meshes.py", "tests/trainers/jax/test_multihost.py",
        "tests/trainers/jax/test_events.py"),
    # tests/integration/survival/conftest.py: the survival stack.
    "survival-stack": (
        "tests/integration/survival/test_jobs_survive.py",
        "tests/integration/survival/test_preemption_cost.py",
        "tests/integration/survival/test_spot_recovery.py",
        "tests/integration/survival/test_service_restarts.py"),
}
GROUP_OF = {path: group for group, paths in FILE_GROUPS.items() for path in paths}

# What the longest files take, in seconds of one process: half of what `--durations` measured
# in a full run on two cores that other work kept busy (load 5-25, 2026-11-30; about twice a
# quiet run's figures, in proportion), rounded. Only their order matters: a file not named here
# counts as short, and a wrong figure costs a less even end, never a wrong result.
SECONDS: dict[str, int] = {
    "tests/integration/test_browser_pages.py": 380,
    "tests/trainers/xla/test_xla_trainer.py": 305,
    "tests/integration/test_api_contract.py": 280,
    "tests/integration/test_presets_run.py": 245,
    # The runtime trial through the emulator (issue 34): 171 s alone at load 10.
    "tests/serving/test_runtime_trial_emulator.py": 85,
    "tests/security/test_fuzz_without_debug.py": 230,
    "tests/serving/test_serve.py": 205,
    "tests/trainers/jax/test_events.py": 200,
    "tests/integration/survival/test_chaos.py": 150,
    "tests/integration/test_ray_clusters.py": 140,
    "tests/trainers/test_resume.py": 135,
    "tests/integration/test_old_layout_migration.py": 135,
    "tests/integration/test_serving.py": 135,
    "tests/integration/test_sweeps.py": 130,
    "tests/integration/survival/test_spot_recovery.py": 115,
    "tests/integration/test_demo.py": 115,
    "tests/trainers/test_serving_sharded.py": 115,
    "tests/integration/test_tpu_jobs.py": 110,
    "tests/trainers/test_hf_models.py": 100,
    "tests/integration/survival/test_jobs_survive.py": 100,
    # 70 before the callbacks' seven replicas ran beside it (issue 36): 63-98 s measured since.
    "tests/integration/test_own_framework.py": 90,
    "tests/integration/client/test_cli.py": 85,
    "tests/localvertex/test_persistent_resources.py": 85,
    "tests/trainers/test_tensor_pipeline.py": 85,
    "tests/localvertex/test_tpu_jobs.py": 80,
    "tests/security/test_roles_matrix.py": 80,
    "tests/integration/test_hang_restart.py": 70,
    "tests/trainers/test_sharded_preemption.py": 70,
    "tests/integration/test_end_to_end.py": 65,
    "tests/trainers/jax/test_meshes.py": 65,
    "tests/integration/survival/test_service_restarts.py": 65,
    "tests/trainers/test_preemption.py": 65,
    "tests/trainers/test_triton_repo.py": 60,
    "tests/integration/test_browser_flow.py": 60,
    "tests/house/test_wheel.py": 45,
    "tests/logs/test_follower.py": 45,
    "tests/trainers/test_vlm.py": 45,
    "tests/security/test_attacks_on_the_stack.py": 45,
    "tests/integration/test_model_parallel.py": 40,
    "tests/integration/client/test_cli_sweeps_clusters.py": 40,
    "tests/runs/test_reconcile_listing.py": 40,
    "tests/security/test_hardening.py": 35,
    "tests/trainers/test_ray_train.py": 35,
    "tests/localvertex/test_ray_node_starts.py": 35,
    "tests/integration/test_live_stream.py": 35,
    "tests/security/test_schema_fuzz.py": 30,
    "tests/trainers/jax/test_multihost.py": 30,
    "tests/serving/test_triton_emulator.py": 30,
    "tests/security/test_emulator_sandbox.py": 30,
    "tests/serving/test_emulator.py": 30,
    "tests/localvertex/test_tuning_jobs.py": 25,
    "tests/integration/test_worker_connections.py": 25,
    "tests/trainers/test_activation_checkpointing.py": 25,
    "tests/integration/survival/test_preemption_cost.py": 25,
    "tests/integration/test_browser_live.py": 25,
    "tests/trainers/test_triton_serve.py": 25,
    "tests/logs/test_callbacks_run.py": 25,
    "tests/integration/client/test_generated_client.py": 20,
    "tests/clusters/test_backend.py": 20,
    "tests/trainers/jax/test_tuning.py": 20,
}


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its file, or its file's group."""
    path = nodeid.split("::", 1)[0]
    return GROUP_OF.get(path, path)


def scope_seconds() -> dict[str, int]:
    seconds: dict[str, int] = {}
    for path, s in SECONDS.items():
        seconds[scope_of(path)] = seconds.get(scope_of(path), 0) + s
    return seconds


@pytest.hookimpl(trylast=True)  # after pytest-django's own ordering, and the stack marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Stack tests last, those on a stack of their own (the survival, chaos and serving
    stacks, stopped with their module or package) before those on the session's shared
    `stack`, which lives from its first test to the end of the run: so no stack idles beside
    another's tests. Within each part, units of work longest first, a unit's tests together
    and in the order they were collected (a stable sort)."""
    seconds = scope_seconds()
    stack_scopes = {scope_of(item.nodeid) for item in items
                    if item.get_closest_marker("stack") is not None}
    session_stack_scopes = {scope_of(item.nodeid) for item in items
                            if "stack" in getattr(item, "fixturenames", ())}
    first_seen: dict[str, int] = {}
    for index, item in enumerate(items):
        first_seen.setdefault(scope_of(item.nodeid), index)

    def key(item: pytest.Item) -> tuple[bool, bool, int, int]:
        scope = scope_of(item.nodeid)
        return (scope in stack_scopes, scope in session_stack_scopes, -seconds.get(scope, 0),
                first_seen[scope])

    items.sort(key=key)


class FileGroupScheduling(LoadFileScheduling):
    """pytest-xdist's file scheduling, with the files of a group as one unit of work, handed
    out in the collection's order."""

    def _split_scope(self, nodeid: str) -> str:
        return scope_of(nodeid)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None
    # pytest-xdist's own reordering (by each file's number of tests) would undo the order above.
    config.option.loadscopereorder = False
    return FileGroupScheduling(config, log)
