"""Reporting the tuning objective the way Vertex reads it: cloudml-hypertune's metric file.

cloudml-hypertune's ``report_hyperparameter_tuning_metric(tag, value, global_step)`` rewrites
``$CLOUD_ML_HP_METRIC_FILE`` (default ``/tmp/hypertune/output.metrics``) with its last 100
reports, one JSON object per line, every value a string (VERTEX_FACTS.md A1):

    {"checkpoint_path": "", "global_step": "10", "timestamp": 1.7e9, "trial": "3",
     "val_loss": "2.31"}

The trainers report through cloudml-hypertune itself where it is installed (the trainers'
extras install it, as Vertex's prebuilt training containers have it), one reporter per
process, so its last-100 queue spans the run. Where it is not (the PyTorch/XLA environment,
whose requirements are TPU images' own) the same format is written here, atomically. A run
reports only when it is a tuning trial: the file variable is set, or a trial id is
(CLOUD_ML_TRIAL_ID, or the ``trial`` of CLUSTER_SPEC's task), so an ordinary job never writes
under /tmp.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

METRIC_FILE_ENV = "CLOUD_ML_HP_METRIC_FILE"
TRIAL_ID_ENV = "CLOUD_ML_TRIAL_ID"
DEFAULT_METRIC_FILE = "/tmp/hypertune/output.metrics"
MAX_REPORTS = 100

# cloudml-hypertune's reporter for this process's own environment, made at the first report.
_reporter: Any = None


def trial_id(env: Mapping[str, str]) -> str:
    if env.get(TRIAL_ID_ENV):
        return env[TRIAL_ID_ENV]
    try:
        task = json.loads(env.get("CLUSTER_SPEC") or "{}").get("task") or {}
    except (ValueError, AttributeError):
        return ""
    return str(task.get("trial") or "")


def metric_file(env: Mapping[str, str]) -> Path | None:
    """Where this run reports, or None when it is not a tuning trial."""
    if env.get(METRIC_FILE_ENV):
        return Path(env[METRIC_FILE_ENV])
    return Path(DEFAULT_METRIC_FILE) if trial_id(env) else None


def report(metrics: Mapping[str, float], step: int,
           env: Mapping[str, str] | None = None) -> Path | None:
    """Append one report per metric (as cloudml-hypertune does, one call per tag) and keep
    the last 100; written to a temporary name and renamed, so a reader never sees half a line."""
    own = env is None
    env = os.environ if env is None else env
    path = metric_file(env)
    if path is None:
        return None
    if own and _library_report(metrics, step, path, env):
        return path
    try:
        lines = path.read_text().splitlines()
    except OSError:
        lines = []
    trial = trial_id(env) or "0"
    for tag, value in metrics.items():
        lines.append(json.dumps({"checkpoint_path": "", "global_step": str(step),
                                 "timestamp": time.time(), "trial": trial,
                                 tag: str(value)}))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.write_text("\n".join(lines[-MAX_REPORTS:]) + "\n")
    os.replace(partial, path)
    return path


def _library_report(metrics: Mapping[str, float], step: int, path: Path,
                    env: Mapping[str, str]) -> bool:
    """Report through cloudml-hypertune; False where it is not installed."""
    global _reporter
    if _reporter is None:
        try:
            import hypertune as library
        except ImportError:
            return False
        _reporter = library.HyperTune()
        # The library reads the file and trial from the environment; a trial named only in
        # CLUSTER_SPEC (or no file variable: the default path) is set here as Vertex names it.
        _reporter.metric_path = str(path)
        _reporter.trial_id = trial_id(env) or "0"
    for tag, value in metrics.items():
        _reporter.report_hyperparameter_tuning_metric(tag, value, global_step=step)
    return True
