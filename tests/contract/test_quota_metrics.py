"""The accelerator -> quota metric table: the names VERTEX_FACTS.md A3 gives, the preemptible
quotas for SPOT and FLEX_START, the planner reading it, and every copy of the table elsewhere in
the project (the emulator's, until it reads this one) agreeing with it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from contract import quota_metrics as qm
from vertexplan import quota

ROOT = Path(__file__).resolve().parents[2]
# VERTEX_FACTS.md A3: the suffixes with a source.
CONFIRMED = {"nvidia_t4_gpus", "nvidia_v100_gpus", "nvidia_p100_gpus", "nvidia_l4_gpus",
             "nvidia_a100_gpus", "nvidia_a100_80gb_gpus", "nvidia_h100_gpus",
             "nvidia_h100_mega_gpus", "nvidia_h200_gpus", "tpu_v3", "tpu_v5e", "tpu_v6e"}


def test_the_table_holds_the_confirmed_names_and_says_which_are_not() -> None:
    suffixes = set(qm.ACCELERATOR_METRICS.values())
    assert suffixes >= CONFIRMED
    inferred = {qm.ACCELERATOR_METRICS[a] for a in qm.UNCONFIRMED}
    assert inferred == suffixes - CONFIRMED == {"nvidia_p4_gpus", "nvidia_b200_gpus"}
    assert not any("v5p" in a.lower() for a in qm.ACCELERATOR_METRICS)  # no name known


@pytest.mark.parametrize(("scheduling", "kind"), [
    ("STANDARD", ""), ("SPOT", "preemptible_"), ("FLEX_START", "preemptible_"),
    ("", ""), ("RESERVATION", "")])
def test_the_metric_for_a_scheduling(scheduling: str, kind: str) -> None:
    assert qm.metric_for("NVIDIA_L4", scheduling) == (
        f"aiplatform.googleapis.com/custom_model_training_{kind}nvidia_l4_gpus")
    assert qm.metric_for("NVIDIA_GB200", scheduling) is None
    assert (scheduling in qm.PREEMPTIBLE) == bool(kind)


def test_every_metric_once_on_demand_and_once_preemptible() -> None:
    names = qm.all_metrics()
    assert len(names) == len(set(names)) == 2 * len(qm.ACCELERATOR_METRICS)
    assert set(names) == {qm.metric(a, preemptible=p)
                          for a in qm.ACCELERATOR_METRICS for p in (False, True)}
    assert set(qm.SCHEDULINGS) > qm.PREEMPTIBLE


@pytest.mark.parametrize("accelerator", sorted(qm.ACCELERATOR_METRICS))
def test_the_planner_draws_on_the_contracts_metrics(accelerator: str) -> None:
    for scheduling in qm.SCHEDULINGS:
        spec = {"workerPoolSpecs": [{"machineSpec": {"acceleratorType": accelerator,
                                                     "acceleratorCount": 2},
                                     "replicaCount": 3}],
                "scheduling": {"strategy": scheduling}}
        [need] = quota.needs({"jobSpec": spec})
        assert need.count == 6
        assert need.metric == qm.metric_for(accelerator, scheduling)
        assert need.other_metric == qm.metric(accelerator,
                                              preemptible=scheduling not in qm.PREEMPTIBLE)


def copies_of_the_table() -> list[tuple[str, dict[str, str]]]:
    """Every dict literal in the project's code that maps accelerator types to metric
    suffixes, with where it is."""
    found = []
    for package in ("localvertex", "vertexplan", "controlplane", "config", "trainers"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if "NVIDIA_TESLA_T4" not in (text := path.read_text()):
                continue
            for node in ast.walk(ast.parse(text)):
                if not isinstance(node, ast.Dict) or not node.keys:
                    continue
                try:
                    table = ast.literal_eval(node)
                except ValueError:
                    continue
                if table.get("NVIDIA_TESLA_T4") == "nvidia_t4_gpus":
                    found.append((f"{path.relative_to(ROOT)}:{node.lineno}", table))
    return found


def test_every_copy_of_the_table_agrees_with_the_contract() -> None:
    for where, table in copies_of_the_table():
        assert table == qm.ACCELERATOR_METRICS, where
    assert not any(where.startswith("vertexplan/") for where, _ in copies_of_the_table())
