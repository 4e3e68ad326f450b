"""The PyTorch trainer's data_wait and compile phases, from a real run, make the job's goodput
exact: each event's line is timed as it arrives (as Cloud Logging stamps it), and the split of
vertexplan/goodput.py then counts exactly what the trainer measured.

The run compiles every block (--compile-blocks) with TorchDynamo and AOTAutograd, the
backend chosen by torch's own TORCH_COMPILE_OVERRIDE_BACKENDS (aot_eager): Inductor's C++
build takes ~40 s on the shared CPUs with a cold cache, and the compile clock the trainer
reads (trainers/torch/compile_time.py) times every backend alike. Every batch takes 20 ms
more to fetch (debug_slow_data_seconds): a slow input pipeline whose cost is known."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime

import pytest

from tests.trainers.replicas import Replica, child_env
from trainers.loop import PHASE_REPORT_STEPS
from vertexplan.goodput import PRODUCTIVE, Attempt, Phase, Step, Timeline, goodput

pytestmark = pytest.mark.trainers

STEPS = 25
DATA_DELAY_S = 0.02


@dataclass
class TimedReplica(Replica):
    """A trainer process whose events carry the time their line arrived."""

    times: list[datetime] = field(default_factory=list)

    def _read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line.rstrip("\n"))
            if line.startswith("{"):
                self.times.append(datetime.now(UTC))
                self.events.append(json.loads(line))


@pytest.fixture(scope="module")
def compiled_run():
    started = datetime.now(UTC)
    replica = TimedReplica.start(
        ["--preset", "tiny", "--steps", str(STEPS), "--seed", "7", "--batch-size", "8",
         "--eval-every", "0", "--strategy", "single", "--compile-blocks",
         "--set", f"debug_slow_data_seconds={DATA_DELAY_S}"],
        child_env(TORCH_COMPILE_OVERRIDE_BACKENDS=">=0:aot_eager"))
    result = replica.finish()
    assert result.returncode == 0, result.stderr[-3000:]
    assert isinstance(replica, TimedReplica)
    return result, list(zip(replica.times, result.events, strict=True)), started, \
        datetime.now(UTC)


def test_the_trainer_reports_its_compile_and_data_wait(compiled_run) -> None:
    result = compiled_run[0]
    phases = result.of("phase")
    compiles = [e for e in phases if e["phase"] == "compile"]
    waits = [e for e in phases if e["phase"] == "data_wait"]
    # The compile is the first step's, printed just before its step event (once step 2 is
    # dispatched: a compile there would be in it too), within those steps' own times.
    first_two = sum(e["step_time_s"] for e in result.of("step")[:2])
    assert [(e["step"], e["seconds"] > 0) for e in compiles] == [(1, True)]
    assert compiles[0]["seconds"] < first_two
    names = [e.get("phase", e["event"]) for e in result.events]
    assert names.index("compile") == names.index("step") - 1
    # Every step waited for its batch; summed, not a line a step.
    assert len(waits) <= math.ceil(STEPS / PHASE_REPORT_STEPS)
    waited = sum(e["seconds"] for e in waits)
    # Each step's wait, and only the wait: the steps' own times hold it and their compute.
    stepped = sum(e["step_time_s"] for e in result.of("step")) - compiles[0]["seconds"]
    assert STEPS * DATA_DELAY_S <= waited < stepped, (waited, stepped)


def test_its_goodput_counts_the_measured_compile_and_data_wait_exactly(compiled_run) -> None:
    _, timed, started, ended = compiled_run
    steps = [Step(1, at, e["step"]) for at, e in timed if e["event"] == "step"]
    phases = [Phase(1, at, e["phase"], e["seconds"]) for at, e in timed
              if e["event"] == "phase" and not e.get("begins")]
    split = goodput(Timeline(attempts=[Attempt(1, started, None, started, ended)],
                             now=ended, steps=steps, phases=phases))
    reported = {name: sum(p.seconds for p in phases if p.phase == name)
                for name in ("compile", "data_wait")}
    assert split.seconds("compile") == pytest.approx(reported["compile"], abs=1e-9)
    assert split.seconds("data_wait") == pytest.approx(reported["data_wait"], abs=1e-9)
    assert split.seconds("data_wait") >= STEPS * DATA_DELAY_S
    billed = sum(c.accelerator_seconds for c in split.categories if c.billed)
    assert billed == pytest.approx(split.billed_accelerator_seconds, abs=1e-6)
    assert split.seconds(PRODUCTIVE) > 0
    assert not any("no phase events" in note for note in split.notes)
