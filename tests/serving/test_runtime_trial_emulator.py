"""A runtime trial through the product's job path on the emulator: the control plane sends the
trial's CustomJob with the real Vertex backend, the emulator runs it as a real trainer process
(eager, compiled, aot and triton served and measured on this CPU, vllm saying it needs a GPU),
and the control plane reads its figures back and preselects the cheapest runtime meeting the
p99 target. Slow: compiling and building the aot package take minutes on 2 busy cores."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controlplane.backends import base
from controlplane.backends.storage import path_for_writer
from controlplane.serving import trials
from controlplane.serving.models import ModelEntry, RuntimeTrial
from tests.localvertex.helpers import FAST_FLAGS, EmulatorProcess
from tests.serving.models import export_model
from tests.trainers import triton_env
from vertexplan import runtime_choice

pytestmark = [pytest.mark.trainers, pytest.mark.slow, pytest.mark.environment]

ARTIFACT = "gs://bucket/jobs/job-1/model"


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[EmulatorProcess]:
    triton_env.python()  # the Triton tools the triton row is served by (built when missing)
    emu = EmulatorProcess(tmp_path / "data", FAST_FLAGS)
    export_model(emu.data_dir / "gcs" / "bucket" / "jobs" / "job-1" / "model", seed=3)
    emu.start()
    yield emu
    emu.stop()


@pytest.fixture
def vertex(settings: Any, emulator: EmulatorProcess) -> Iterator[Any]:
    settings.VERTEX_EMULATOR_ADDR = emulator.address
    settings.VERTEX_EMULATOR_TOKEN = emulator.token
    settings.CP_BACKEND = "controlplane.backends.training.VertexBackend"
    settings.CP_LOCAL_GCS_ROOT = str(emulator.data_dir / "gcs")
    base.get_backend.cache_clear()
    yield base.get_backend()
    base.get_backend.cache_clear()


def test_a_trial_measures_each_runtime_on_the_emulator_and_preselects_one(
        vertex: Any, emulator: EmulatorProcess, team: Any, member: Any) -> None:
    entry = ModelEntry.objects.create(team=team, created_by=member, display_name="gpt",
                                      artifact_uri=ARTIFACT, image_uri="img",
                                      state=ModelEntry.State.READY)
    traffic = runtime_choice.Traffic(prompt_tokens=16, output_tokens=8, concurrency=2,
                                     requests=6, p99_target_ms=600_000)
    trial = trials.start(entry, member, traffic=traffic, machine_type="n1-standard-4")
    trials.submit(trial.pk)
    deadline = time.monotonic() + 1200
    while time.monotonic() < deadline:
        trials.reconcile_all()
        trial.refresh_from_db()
        if trial.state in (RuntimeTrial.State.SUCCEEDED, RuntimeTrial.State.FAILED):
            break
        time.sleep(2)
    assert trial.state == RuntimeTrial.State.SUCCEEDED, (trial.error_message,
                                                         emulator.output()[-3000:])
    rows = {row["runtime"]: row for row in trial.results}
    assert list(rows) == ["eager", "compiled", "aot", "triton", "vllm"]
    for name in ("eager", "compiled", "aot", "triton"):
        row = rows[name]
        assert row["note"] == "" and row["requests"] == 6 and row["tokens_per_s"] > 0, row
        assert 0 < row["p50_ms"] <= row["p99_ms"] and row["cost_per_million_micros"] > 0, row
    assert rows["vllm"]["note"] == "needs a GPU"
    # A target every runtime meets: the cheapest (the fastest, on one machine's price) wins.
    cheapest = min(("eager", "compiled", "aot", "triton"),
                   key=lambda n: rows[n]["cost_per_million_micros"])
    assert trial.chosen_runtime == cheapest
    # The job wrote its figures to its own output folder, under the team's output prefix.
    assert Path(path_for_writer(trials.results_folder(trial)), "figures.json").is_file()
