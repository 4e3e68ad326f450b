"""A team's own HF Trainer script with the callbacks (callbacks/vcp_callbacks), run for real on two
ranks under torchrun, its output stored as Cloud Logging would give it (issue 36): the steps,
total, evaluations and checkpoints are the callbacks' exact ones, each once (the Trainer's own
loss dicts in the same output stay lines), and every third step carries both ranks' own step
times (what names a straggler)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from controlplane.logs.models import FrameworkTrack, LogLine, StepMetric
from controlplane.logs.store import RANK_TIMES, Target, store_entries
from controlplane.runs.models import Job, JobEvent
from localvertex.replicas.torch_extensions import for_replica
from tests import make_env
from tests.integration.own_frameworks import with_callbacks as scripts
from tests.logs.conftest import followed_job
from tests.logs.test_framework_lines import custom_job
from vertexplan.logparse.entries import LogEntry

pytestmark = pytest.mark.trainers

T0 = datetime(2026, 5, 1, tzinfo=UTC)


def with_callbacks(tmp_path: Path) -> Path:
    """The team's script with the callbacks added: two lines, as the package's docs show."""
    script = tmp_path / "train.py"
    script.write_text(scripts.hf_trainer(rank_times_every=3) + scripts.EXIT)
    return script


def as_cloud_logging(stdout: str, stderr: str) -> list[LogEntry]:
    """Each line an entry of the chief replica: a JSON object on stdout as a jsonPayload, the
    rest as text (stderr at ERROR, as Vertex writes it)."""
    entries = []
    for stream, text in (("out", stdout), ("err", stderr)):
        for i, line in enumerate(text.splitlines()):
            payload = None
            if stream == "out" and line.startswith("{\""):
                payload = json.loads(line)
            entries.append(LogEntry(
                insert_id=f"{stream}-{i}", timestamp=T0 + timedelta(milliseconds=i),
                severity=200 if stream == "out" else 500, job_id="42",
                task_name="workerpool0-0", json_payload=payload,
                text_payload=None if payload is not None else line,
                log_name="projects/p/logs/workerpool0-0"))
    return sorted(entries, key=lambda e: (e.timestamp, e.insert_id))


def test_the_callbacks_exact_steps_and_rank_times_and_no_step_twice(
        db: None, tmp_path: Path, settings: Any) -> None:
    settings.CP_LOCAL_STORAGE_ROOT = str(tmp_path / "buckets")
    checkpoints = tmp_path / "buckets" / "acme" / "vision" / "exp" / "checkpoints"
    env = {**os.environ, "AIP_CHECKPOINT_DIR": str(checkpoints), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
         str(with_callbacks(tmp_path))],
        capture_output=True, text=True, env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    job: Job = followed_job(custom_job(["torchrun", "--nproc_per_node", "2", "train.py"]))
    page = as_cloud_logging(done.stdout, done.stderr)
    # Stored in two pages, the second re-read from the middle of the first.
    half = len(page) // 2
    store_entries(page[:half + 5], {"42": Target(job.pk, 1)})
    store_entries(page[half:], {"42": Target(job.pk, 1)})

    steps = list(StepMetric.objects.filter(job=job).order_by("step").values_list("step", flat=True))
    assert steps == [3, 6, 9, 12]
    job.refresh_from_db()
    assert (job.last_step, job.total_steps) == (12, 12)
    kinds = list(JobEvent.objects.filter(job=job).exclude(kind__in=(RANK_TIMES, "run_started"))
                 .order_by("step", "kind").values_list("kind", "step"))
    assert kinds == [("checkpoint_saved", 6), ("eval", 6), ("checkpoint_saved", 12),
                     ("eval", 12), ("run_finished", 12)]
    rank_times = JobEvent.objects.filter(job=job, kind=RANK_TIMES).order_by("step")
    assert [e.step for e in rank_times] == [3, 6, 9, 12]
    assert all(len(e.data["rank_step_time_s"]) == 2 for e in rank_times)
    assert JobEvent.objects.filter(job=job, kind="run_started").count() == 2
    # The Trainer's own loss dicts were stored as lines, and not read as steps.
    assert LogLine.objects.filter(job=job, message__startswith="{'loss'").count() == 4
    assert FrameworkTrack.objects.get(job=job, replica="workerpool0-0").state["reported"]


def accelerate_with_tracker(tmp_path: Path) -> Path:
    """The team's own Accelerate loop (the one tests/integration/test_own_framework.py runs
    unchanged) with the tracker added as its docs show (own_frameworks/with_callbacks.py)."""
    script = tmp_path / "loop.py"
    script.write_text(scripts.accelerate(rank_times_every=3) + scripts.EXIT)
    return script


def deepspeed_followed(tmp_path: Path) -> Path:
    """The team's own DeepSpeed loop (the one tests/integration/test_own_framework.py runs
    unchanged) with the reporter's lines, and the bar on rank 0 only (the script is written
    for one process: two bars on one stdout would run into each other's lines)."""
    text = scripts.deepspeed(rank_times_every=3)
    bar = "bar = tqdm(range(STEPS), file=sys.stdout)"
    assert text.count(bar) == 1
    text = text.replace(bar, "bar = tqdm(range(STEPS), file=sys.stdout, "
                             "disable=engine.global_rank != 0)")
    script = tmp_path / "ds.py"
    script.write_text(text + scripts.EXIT)
    return script


def two_ranks(job: Job, script: Path, tmp_path: Path, env: dict[str, str]) -> None:
    """SCRIPT run on two CPU ranks under torchrun, its output stored as the chief's."""
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", str(script)],
        capture_output=True, text=True, env={**os.environ, "OMP_NUM_THREADS": "1", **env},
        timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    store_entries(as_cloud_logging(done.stdout, done.stderr), {"42": Target(job.pk, 1)})


def run_and_store(job: Job, argv: list[str], tmp_path: Path, env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    store_entries(as_cloud_logging(done.stdout, done.stderr), {"42": Target(job.pk, 1)})


def test_the_lightning_callback_reports_exactly(db: None, tmp_path: Path, settings: Any
                                                 ) -> None:
    settings.CP_LOCAL_STORAGE_ROOT = str(tmp_path / "buckets")
    checkpoints = tmp_path / "buckets" / "acme" / "vision" / "exp" / "checkpoints"
    (tmp_path / "fit.py").write_text(scripts.lightning(rank_times_every=3))
    lightning = followed_job(custom_job(["python", "fit.py"]))
    run_and_store(lightning, ["fit.py"], tmp_path, {"AIP_CHECKPOINT_DIR": str(checkpoints)})
    steps = list(StepMetric.objects.filter(job=lightning).order_by("step")
                 .values_list("step", "loss"))
    # The callback's exact steps every log_every_n_steps (3), none of the bar's estimates.
    assert [s for s, _ in steps] == [3, 6, 9, 12] and all(loss for _, loss in steps)
    saved = list(JobEvent.objects.filter(job=lightning, kind="checkpoint_saved")
                 .order_by("step").values_list("step", flat=True))
    assert saved == [6, 12]
    assert JobEvent.objects.filter(job=lightning, kind="eval").count() == 3  # every epoch
    assert JobEvent.objects.get(job=lightning, kind="run_finished").step == 12
    lightning.refresh_from_db()
    assert lightning.total_steps == 12


def test_the_accelerate_tracker_reports_exactly(db: None, tmp_path: Path, settings: Any
                                                ) -> None:
    """The same Accelerate job as the stack's, with the tracker, on two ranks: its steps,
    total, lr and evaluations are the tracker's exact ones, each once, every third step with
    both ranks' own step times; its save_state checkpoints are reported once each (the loop's
    bar, evaluations and Accelerate's own checkpoint lines stay lines)."""
    settings.CP_LOCAL_STORAGE_ROOT = str(tmp_path / "buckets")
    checkpoints = tmp_path / "buckets" / "acme" / "vision" / "exp" / "checkpoints"
    accelerate = followed_job(custom_job(["accelerate", "launch", "loop.py"]))
    two_ranks(accelerate, accelerate_with_tracker(tmp_path), tmp_path,
              {"AIP_CHECKPOINT_DIR": str(checkpoints)})
    steps = StepMetric.objects.filter(job=accelerate).order_by("step")
    assert [(s.step, s.lr) for s in steps] == [(n, 0.05) for n in range(1, 13)]
    assert all(s.loss is not None for s in steps)
    accelerate.refresh_from_db()
    assert (accelerate.last_step, accelerate.total_steps) == (12, 12)
    assert list(JobEvent.objects.filter(job=accelerate, kind="eval").order_by("step")
                .values_list("step", flat=True)) == [6, 12]
    saved = JobEvent.objects.filter(job=accelerate, kind="checkpoint_saved").order_by("step")
    assert [(e.step, e.data["path"]) for e in saved] == [
        (6, str(checkpoints / "step_6")), (12, str(checkpoints / "step_12"))]
    assert LogLine.objects.filter(job=accelerate,
                                  message__contains="Saving current state to").count() == 2
    rank_times = JobEvent.objects.filter(job=accelerate, kind=RANK_TIMES).order_by("step")
    assert [e.step for e in rank_times] == [3, 6, 9, 12]
    assert all(len(e.data["rank_step_time_s"]) == 2 for e in rank_times)
    assert JobEvent.objects.filter(job=accelerate, kind="run_started").count() == 2
    assert JobEvent.objects.get(job=accelerate, kind="run_finished").step == 12
    assert FrameworkTrack.objects.get(job=accelerate, replica="workerpool0-0").state["reported"]


def test_the_deepspeed_reporter_reports_exactly(db: None, tmp_path: Path, settings: Any
                                                ) -> None:
    """The same DeepSpeed job as the stack's with the reporter's one line, on two ranks: the
    engine's exact steps every steps_per_print with the loss, lr and both ranks' own step
    times; its save_checkpoint folders and the evaluations, each once (the engine's own step
    and checkpoint lines stay lines)."""
    make_env.build("ds-ops", timeout_s=900)  # a no-op after `make envs`, as `make test` runs
    settings.CP_LOCAL_STORAGE_ROOT = str(tmp_path / "buckets")
    checkpoints = tmp_path / "buckets" / "acme" / "vision" / "exp" / "checkpoints"
    engine = followed_job(custom_job(["deepspeed", "--num_gpus", "2", "ds.py"]))
    two_ranks(engine, deepspeed_followed(tmp_path), tmp_path,
              {"AIP_CHECKPOINT_DIR": str(checkpoints), **for_replica(tmp_path, None)})
    steps = StepMetric.objects.filter(job=engine).order_by("step")
    assert [(s.step, s.lr) for s in steps] == [(n, 0.05) for n in (3, 6, 9, 12)]
    assert all(s.loss is not None for s in steps)
    engine.refresh_from_db()
    assert (engine.last_step, engine.total_steps) == (12, 12)
    rank_times = JobEvent.objects.filter(job=engine, kind=RANK_TIMES).order_by("step")
    assert [e.step for e in rank_times] == [3, 6, 9, 12]
    assert all(len(e.data["rank_step_time_s"]) == 2 for e in rank_times)
    saved = JobEvent.objects.filter(job=engine, kind="checkpoint_saved").order_by("step")
    assert [(e.step, e.data["path"]) for e in saved] == [
        (6, str(checkpoints / "global_step6")), (12, str(checkpoints / "global_step12"))]
    assert list(JobEvent.objects.filter(job=engine, kind="eval").order_by("step")
                .values_list("step", flat=True)) == [6, 12]
    assert JobEvent.objects.get(job=engine, kind="run_finished").step == 12
    assert LogLine.objects.filter(job=engine, message__contains="step=3, skipped=").count() == 1
    assert FrameworkTrack.objects.get(job=engine, replica="workerpool0-0").state["reported"]
