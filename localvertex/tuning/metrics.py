"""A trial's reports, read as Vertex reads them: cloudml-hypertune's metric file, one JSON
object per line (the metric's tag as key, ``global_step``, every value a string; VERTEX_FACTS.md
A1), turned into the trial's measurements and its final measurement.

The file is read while the trial runs as well as when it ends: each read gives the trial all
the measurements reported so far (cloudml-hypertune rewrites the whole file with its last 100
reports, so a report that fell out of it keeps its measurement on the trial).
"""

from __future__ import annotations

import contextlib
import json
import math
from pathlib import Path
from typing import Any

from google.cloud import aiplatform_v1

Goal = aiplatform_v1.StudySpec.MetricSpec.GoalType
Selection = aiplatform_v1.StudySpec.MeasurementSelectionType
MeasurementPb = aiplatform_v1.Measurement.pb()
MAX_REPORTS = 100  # cloudml-hypertune keeps the last 100 reports in its file


def metric_file(data_dir: Path, custom_job_id: str) -> Path:
    """Where a trial's replicas write their reports: in the trial job's own working folder
    (sandbox.working_dir), the one place its replicas may write and nothing else reads."""
    return Path(data_dir).absolute() / "work" / custom_job_id / "hypertune" / "output.metrics"


def file_version(path: Path) -> tuple[int, int] | None:
    """(mtime_ns, size) of the file, or None when there is none yet: a reader skips a file
    it has already read."""
    try:
        stat = path.stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def read_reports(path: Path) -> list[dict[str, Any]]:
    """The file's reports, oldest first; lines that are not JSON objects are skipped."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    reports = []
    for line in text.splitlines()[-MAX_REPORTS:]:
        with contextlib.suppress(ValueError):
            report = json.loads(line)
            if isinstance(report, dict):
                reports.append(report)
    return reports


def _float(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _step(report: dict[str, Any]) -> int:
    try:
        return max(0, int(report.get("global_step") or 0))
    except (TypeError, ValueError):
        return 0


def measurements_of(study_spec: Any, reports: list[dict[str, Any]]) -> list[Any]:
    """One Measurement per report that holds a value of one of the study's metrics."""
    metric_ids = [m.metric_id for m in study_spec.metrics]
    measurements = []
    for report in reports:
        found = [(mid, _float(report.get(mid))) for mid in metric_ids if mid in report]
        found = [(mid, v) for mid, v in found if v is not None]
        if not found:
            continue
        measurement = MeasurementPb()
        measurement.step_count = _step(report)
        for mid, value in found:
            metric = measurement.metrics.add()
            metric.metric_id, metric.value = mid, value
        measurements.append(measurement)
    return measurements


def merged(kept: list[Any], read: list[Any]) -> list[Any]:
    """The trial's measurements so far joined with those just read from its file: the file is
    the history's last reports, so the longest tail of `kept` that begins `read` is the
    overlap. A re-read never adds a measurement twice, and one that fell out of the file (more
    than 100 reports) stays on the trial."""
    def key(measurement: Any) -> bytes:
        return measurement.SerializeToString(deterministic=True)

    kept_keys, read_keys = [key(m) for m in kept], [key(m) for m in read]
    for overlap in range(min(len(kept), len(read)), 0, -1):
        if kept_keys[len(kept) - overlap:] == read_keys[:overlap]:
            return [*kept, *read[overlap:]]
    return [*kept, *read]


def final_of(study_spec: Any, measurements: list[Any]) -> Any:
    """The trial's final measurement: the last one holding the objective, or the best with
    BEST_MEASUREMENT, beside the other metrics at their latest values; None without one."""
    primary = study_spec.metrics[0]
    scored = [(m, next(x.value for x in m.metrics if x.metric_id == primary.metric_id))
              for m in measurements
              if any(x.metric_id == primary.metric_id for x in m.metrics)]
    if not scored:
        return None
    if study_spec.measurement_selection_type == Selection.BEST_MEASUREMENT:
        pick = min if primary.goal == Goal.MINIMIZE else max
        chosen = pick(scored, key=lambda pair: pair[1])[0]
    else:
        chosen = scored[-1][0]
    final = MeasurementPb()
    final.CopyFrom(chosen)
    have = {m.metric_id for m in final.metrics}
    for measurement in reversed(measurements):
        for metric in measurement.metrics:
            if metric.metric_id not in have:
                have.add(metric.metric_id)
                final.metrics.add().CopyFrom(metric)
    return final


def replace_measurements(field: Any, measurements: list[Any]) -> None:
    """A trial's repeated measurements field, set to `measurements` (copies)."""
    copies = []
    for measurement in measurements:
        copy = type(measurement)()
        copy.CopyFrom(measurement)
        copies.append(copy)
    del field[:]
    field.extend(copies)
