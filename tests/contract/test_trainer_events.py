"""What the trainers print is what the contract describes: every line the event helpers of
trainers/events.py write validates (as printed and as read back from Cloud Logging), every
event name and field any trainer, launcher or server prints is one the contract names, and the
example on the bring-your-own-code page prints valid events."""

from __future__ import annotations

import ast
import json
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from contract import events as contract_events
from contract.events import COMMON, EVENTS, validate
from trainers import events as trainer_events

ROOT = Path(__file__).resolve().parents[2]
EMITTERS = {"run_started": "run_started", "step": "step", "checkpoint_saved": "checkpoint_saved",
            "checkpoint_deleted": "checkpoint_deleted", "resumed": "resumed",
            "preempted": "preempted", "evaluation": "eval", "tracking": "tracking",
            "run_finished": "run_finished", "error": "error"}


def printed(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    lines = capsys.readouterr().out.splitlines()
    assert lines
    return [json.loads(line) for line in lines]


def as_read_back(record: dict[str, Any]) -> dict[str, Any]:
    """The record as Cloud Logging's jsonPayload hands it back: every number a float."""
    if isinstance(record, dict):
        return {k: as_read_back(v) for k, v in record.items()}
    if isinstance(record, list):
        return [as_read_back(v) for v in record]
    if isinstance(record, int) and not isinstance(record, bool):
        return float(record)
    return record


def test_every_line_the_event_helpers_print_validates(capsys: pytest.CaptureFixture[str]) -> None:
    e = trainer_events
    # PyTorch: {dp, tp, pp}; JAX: {data, fsdp, tensor} and the device count; XLA: its split.
    e.run_started(0, 4, "fsdp", 10_745_088, None, dims={"dp": 2, "tp": 2, "pp": 1},
                  shape={"n_layer": 6, "n_head": 6, "d_model": 384, "seq_len": 256},
                  precision="bf16")
    e.run_started(1, 2, "jax_fsdp", 1000, 20, dims={"data": 2, "fsdp": 2, "tensor": 2},
                  shape={"n_layer": 2, "n_head": 2, "d_model": 64, "seq_len": 64,
                         "devices": 8})
    e.run_started(0, 1, "xla_spmd", 1000, 20, dims={"data": 1, "fsdp": 4},
                  shape={"n_layer": 2, "n_head": 2, "d_model": 64, "seq_len": 64,
                         "devices": 4, "sharded_parameters": 640}, precision="fp32")
    e.step(1, 40, 5.5, 3e-4, 2048.0, 0.012)
    e.step(2, 40, float("nan"), 3e-4, float("inf"), 0.0)  # printed as null
    e.evaluation(10, {"val_loss": 2.25, "val_perplexity": 9.49})
    e.checkpoint_saved(10, "gs://bucket/team/job-1/checkpoints/step-10", 4096, 0.5)
    e.checkpoint_deleted(5, "gs://bucket/team/job-1/checkpoints/step-5")
    e.checkpoint_deleted(None, "gs://bucket/team/job-1/checkpoints/unreadable")
    e.resumed(10, "/gcs/bucket/team/job-1/checkpoints/step-10")
    e.preempted("SIGTERM", 12, "gs://bucket/team/job-1/checkpoints/step-12")
    e.preempted("SIGTERM", 3, None)
    e.tracking("wandb", "https://wandb.ai/team/proj/runs/abc", run_id="abc",
               run_dir="/tmp/wandb", offline=False)
    e.tracking("wandb", "", run_id="abc", run_dir="/tmp/wandb", offline=True)
    e.run_finished(40, 2.1, 12.5)
    e.run_finished(0, None, 0.1)
    e.error(None, ValueError("--steps must be positive"))
    e.error(3, RuntimeError("CUDA out of memory"))
    records = printed(capsys)
    assert {r["event"] for r in records} == set(EMITTERS.values())
    for record in records:
        assert validate(record) == [], record
        assert validate(as_read_back(record)) == [], record


def _emitted(path: Path) -> list[tuple[str, set[str], int]]:
    """(event name, keyword fields, line) of each events.emit(NAME, ...) and each call of
    an event helper (events.step(...)) in a trainer module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "events"):
            continue
        keywords = {k.arg for k in node.keywords if k.arg is not None}
        if node.func.attr == "emit":
            first = node.args[0] if node.args else None
            # The name is the contract's constant (contract_events.STEP), never a literal.
            assert (isinstance(first, ast.Attribute) and isinstance(first.value, ast.Name)
                    and first.value.id == "contract_events"), (
                f"{path}:{node.lineno}: an event's name is the contract's constant")
            found.append((getattr(contract_events, first.attr), keywords - {"severity"},
                          node.lineno))
        elif node.func.attr in EMITTERS:
            found.append((EMITTERS[node.func.attr], set(), node.lineno))
    return found


def test_every_event_the_trainers_print_is_one_the_contract_names() -> None:
    sources = [p for p in sorted((ROOT / "trainers").rglob("*.py"))
               if p.name != "events.py" and "events" in p.read_text()]
    seen = set()
    for path in sources:
        for name, fields, line in _emitted(path):
            where = f"{path.relative_to(ROOT)}:{line}"
            assert name in EVENTS, f"{where} prints {name!r}, which the contract does not name"
            known = {f.name for f in (*COMMON, *EVENTS[name].fields)}
            assert fields <= known, f"{where}: {sorted(fields - known)} not in {name}'s fields"
            seen.add(name)
    # The scan reads the trainers (not nothing): the helpers and the other events are there.
    assert {"run_started", "step", "checkpoint_saved", "paused", "serving_started",
            "not_a_trainer", "hosts", "launching", "tracking_failed"} <= seen


def test_the_own_code_pages_example_prints_valid_events() -> None:
    page = (ROOT / "controlplane/runs/templates/runs/own_code.html").read_text()
    example = unescape(page.split('id="own-code-example">', 1)[1].split("</pre>", 1)[0])
    lines: list[str] = []

    def print_(text: str, flush: bool = False) -> None:
        lines.append(text)

    def train_one_step() -> float:
        return sum(range(1000)) / 199_800  # a step that takes some time: 2.5

    exec(example, {"print": print_, "train_one_step": train_one_step, "BATCH_TOKENS": 4096})
    assert len(lines) == 102
    for line in lines:
        assert validate(json.loads(line)) == [], line
