"""What the pages say about a job's machines, severities and progress."""

from __future__ import annotations

from typing import Any

import pytest

from vertexplan import summaries


def custom_job(*pools: dict[str, Any]) -> dict[str, Any]:
    return {"jobSpec": {"workerPoolSpecs": list(pools)}}


def test_cpu_pool() -> None:
    job = custom_job({"machineSpec": {"machineType": "n1-standard-4"}, "replicaCount": "2"})
    assert summaries.accelerator_summary(job) == "2 x n1-standard-4"


def test_gpu_pools_are_joined_and_empty_slots_skipped() -> None:
    gpu = {"machineSpec": {"machineType": "a2-highgpu-8g",
                           "acceleratorType": "NVIDIA_TESLA_A100", "acceleratorCount": 8},
           "replicaCount": "1", "diskSpec": {"bootDiskType": "pd-ssd", "bootDiskSizeGb": 200}}
    assert summaries.accelerator_summary(custom_job(gpu)) == (
        "1 x a2-highgpu-8g (8 x NVIDIA_TESLA_A100)")
    both = custom_job(gpu, {}, {**gpu, "replicaCount": "3"})
    assert summaries.accelerator_summary(both) == (
        "1 x a2-highgpu-8g (8 x NVIDIA_TESLA_A100) + 3 x a2-highgpu-8g (8 x NVIDIA_TESLA_A100)")
    chief = summaries.pool_summaries(both)[0]
    assert (chief.role, chief.boot_disk_size_gb, chief.boot_disk_type) == ("chief", 200, "pd-ssd")


def test_missing_or_odd_json_gives_no_summary() -> None:
    assert summaries.accelerator_summary(None) == ""
    assert summaries.accelerator_summary({"jobSpec": {}}) == ""


@pytest.mark.parametrize(("severity", "css", "name"), [
    (0, "sev-info", "DEFAULT"), (100, "sev-debug", "DEBUG"), (200, "sev-info", "INFO"),
    (400, "sev-warning", "WARNING"), (500, "sev-error", "ERROR"),
    (600, "sev-error", "CRITICAL"),
])
def test_severities(severity: int, css: str, name: str) -> None:
    assert summaries.severity_class(severity) == css
    assert summaries.severity_name(severity) == name


@pytest.mark.parametrize(("last", "total", "percent"), [
    (None, 100, None), (10, None, None), (0, 100, 0), (50, 200, 25), (120, 100, 100),
])
def test_progress_percent(last: int | None, total: int | None, percent: int | None) -> None:
    assert summaries.progress_percent(last, total) == percent
