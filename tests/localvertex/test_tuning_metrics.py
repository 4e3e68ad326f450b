"""Reading a trial's cloudml-hypertune file into measurements, again and again while the trial
runs: a re-read never adds a measurement twice, and measurements that fell out of the file's
last 100 reports stay on the trial."""

from __future__ import annotations

import json
from pathlib import Path

from google.cloud import aiplatform_v1

from localvertex.tuning.metrics import (
    MAX_REPORTS,
    final_of,
    measurements_of,
    merged,
    read_reports,
)

SPEC = aiplatform_v1.StudySpec.pb()(metrics=[{"metric_id": "val_loss", "goal": 2}])


def write(path: Path, steps: range) -> None:
    """The file as cloudml-hypertune leaves it: its last 100 reports; each evaluation reports
    two tags, one line each, and only val_loss is the study's."""
    lines = []
    for step in steps:
        for tag, value in (("val_loss", 10.0 / step), ("val_perplexity", 99.0)):
            lines.append(json.dumps({"global_step": str(step), "trial": "1", tag: str(value)}))
    path.write_text("\n".join(lines[-MAX_REPORTS:]) + "\n")


def steps_of(measurements: list) -> list[int]:
    return [m.step_count for m in measurements]


def test_rereading_a_growing_file_adds_each_measurement_once(tmp_path: Path) -> None:
    path, kept = tmp_path / "output.metrics", []
    for last in (1, 2, 2, 5):
        write(path, range(1, last + 1))
        kept = merged(kept, measurements_of(SPEC, read_reports(path)))
    assert steps_of(kept) == [1, 2, 3, 4, 5]
    assert [m.metrics[0].value for m in kept] == [10.0 / s for s in range(1, 6)]


def test_measurements_that_left_the_file_stay(tmp_path: Path) -> None:
    path, kept = tmp_path / "output.metrics", []
    for last in (30, 60, 90):  # two lines per step: the file holds only the last 50 steps
        write(path, range(1, last + 1))
        kept = merged(kept, measurements_of(SPEC, read_reports(path)))
    assert steps_of(kept) == list(range(1, 91))
    final = final_of(SPEC, kept)
    assert final.step_count == 90 and final.metrics[0].value == 10.0 / 90


def test_nothing_read_keeps_what_the_trial_has(tmp_path: Path) -> None:
    write(tmp_path / "m", range(1, 3))
    kept = measurements_of(SPEC, read_reports(tmp_path / "m"))
    assert steps_of(merged(kept, [])) == [1, 2]
    assert measurements_of(SPEC, read_reports(tmp_path / "absent")) == []
    assert final_of(SPEC, []) is None
