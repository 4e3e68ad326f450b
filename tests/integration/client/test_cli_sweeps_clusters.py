"""`vcp sweeps` and `vcp clusters` against the real stack: a sweep submitted from the YAML that
`gcloud ai hp-tuning-jobs create --config` takes, waited for (exit 0), its trials, export and
clone; an invalid sweep refused on its field (exit 1) with nothing created; a cluster created
from a file, listed, refused a malformed scale (exit 2), deleted, and a Ray job for it refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess

import pytest
import yaml

pytestmark = pytest.mark.integration

Vcp = Callable[..., CompletedProcess[str]]

# A HyperparameterTuningJob as gcloud's --config takes it (no display name: that is a flag).
GCLOUD_STUDY = """\
studySpec:
  metrics:
  - metricId: val_loss
    goal: MINIMIZE
  parameters:
  - parameterId: learning_rate
    doubleValueSpec: {minValue: 0.0001, maxValue: 0.01}
    scaleType: UNIT_LOG_SCALE
  algorithm: RANDOM_SEARCH
maxTrialCount: 2
parallelTrialCount: 2
maxFailedTrialCount: 1
trialJobSpec:
  workerPoolSpecs:
  - machineSpec: {machineType: n1-standard-4}
    replicaCount: 1
    containerSpec:
      imageUri: us-docker.pkg.dev/my-project/trainers/trainer:1
      command: [python, -m, trainers.train]
      args: [--preset, tiny, --steps, "4", --batch-size, "4"]
"""

CLUSTER = {"name": "cli-pool", "pools": [{"id": "main", "machine_type": "n1-standard-4"}],
           "ray": None}


def test_a_sweep_from_gcloud_yaml_waits_exports_and_clones(vcp: Vcp, tmp_path: Path) -> None:
    study = tmp_path / "study.yaml"
    study.write_text(GCLOUD_STUDY)
    valid = vcp("-o", "json", "sweeps", "validate", "-f", str(study))
    assert valid.returncode == 0, valid.stderr
    assert json.loads(valid.stdout)["valid"] is True

    done = vcp("-o", "json", "sweeps", "submit", "-f", str(study), "--name", "cli-sweep",
               "--wait", timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    sweep = json.loads(done.stdout)
    assert sweep["name"] == "cli-sweep" and sweep["state"] == "SUCCEEDED"
    assert f"sweep {sweep['id']}: SUCCEEDED" in done.stderr

    trials = vcp("-o", "json", "sweeps", "get", str(sweep["id"]), "--trials")
    assert trials.returncode == 0, trials.stderr
    rows = json.loads(trials.stdout)
    assert len(rows) == 2 and all(t["state"] == "SUCCEEDED" for t in rows)
    assert sum(t["best"] for t in rows) == 1
    assert all(1e-4 <= t["parameters"]["learning_rate"] <= 1e-2 for t in rows)
    table = vcp("sweeps", "list")
    assert table.stdout.splitlines()[0].split()[:4] == ["ID", "NAME", "TEAM", "STATE"]
    assert any(r.split()[:2] == [str(sweep["id"]), "cli-sweep"]
               for r in table.stdout.splitlines())

    exported = vcp("sweeps", "export", str(sweep["id"]))
    assert exported.returncode == 0, exported.stderr
    document = yaml.safe_load(exported.stdout)
    assert document["studySpec"]["metrics"] == [{"metricId": "val_loss", "goal": "MINIMIZE"}]
    assert document["maxTrialCount"] == 2
    cloned = vcp("sweeps", "clone", str(sweep["id"]))
    assert cloned.returncode == 0, cloned.stderr
    body = yaml.safe_load(cloned.stdout)
    assert body["display_name"] == "cli-sweep-clone"
    assert body["parameters"][0]["parameter_id"] == "learning_rate"

    # An ended sweep cannot be cancelled: refused, saying why.
    cancel = vcp("sweeps", "cancel", str(sweep["id"]))
    assert cancel.returncode == 1
    assert "state: the sweep is already SUCCEEDED" in cancel.stderr


def test_an_invalid_sweep_exits_1_on_its_field_and_creates_nothing(
        vcp: Vcp, tmp_path: Path) -> None:
    before = json.loads(vcp("-o", "json", "sweeps", "list", "--limit", "1000").stdout)
    bad = tmp_path / "bad.yaml"
    bad.write_text(GCLOUD_STUDY.replace("goal: MINIMIZE", "goal: SMALLEST"))
    for command in (["sweeps", "submit", "-f", str(bad)], ["sweeps", "validate", "-f", str(bad)]):
        done = vcp(*command)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "metrics[0].goal" in done.stderr and "MINIMIZE" in done.stderr
    after = json.loads(vcp("-o", "json", "sweeps", "list", "--limit", "1000").stdout)
    assert len(after) == len(before)


def test_a_cluster_is_created_listed_and_deleted_from_the_command_line(
        vcp: Vcp, tmp_path: Path) -> None:
    spec = tmp_path / "cluster.yaml"
    spec.write_text(yaml.safe_dump(CLUSTER))
    made = vcp("-o", "json", "clusters", "create", "-f", str(spec))
    assert made.returncode == 0, made.stderr
    cluster = json.loads(made.stdout)
    assert cluster["name"] == "cli-pool" and cluster["hourly_micros"] > 0
    assert "whether or not a job runs" in made.stderr

    listed = json.loads(vcp("-o", "json", "clusters", "list").stdout)
    assert cluster["id"] in [c["id"] for c in listed]
    assert vcp("clusters", "scale", str(cluster["id"]), "main:2").returncode == 2

    gone = vcp("-o", "json", "clusters", "delete", str(cluster["id"]))
    assert gone.returncode == 0, gone.stderr
    assert json.loads(gone.stdout)["state"] in ("DELETING", "DELETED")
    refused = vcp("clusters", "ray-jobs", "submit", "--cluster", str(cluster["id"]), "--",
                  "python", "-c", "print(1)")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "cluster:" in refused.stderr

    again = vcp("clusters", "create", "-f", str(tmp_path / "missing.yaml"))
    assert again.returncode == 2
