"""A CustomJob against its region's capacity: the quota check CreateCustomJob makes, and the
stockout a starting job may meet (quotas/capacity.py holds the limits and the stockouts)."""

from __future__ import annotations

import grpc
from google.cloud import aiplatform_v1
from google.rpc import error_details_pb2

from contract import quota_metrics
from localvertex.core.errors import ApiError
from localvertex.jobs.store import CustomJobPb, JobStore
from localvertex.quotas.capacity import Capacity, needs

STOCKOUT_MESSAGE = (
    "Resources are insufficient in region {region} for {scheduling}: the zone does not have "
    "enough resources available to fulfill the request (STOCKOUT). Try a different region "
    "or scheduling strategy, or try again later."
)


def _enum_name(enum: type, value: int) -> str:
    try:
        return enum(value).name
    except ValueError:
        return ""


def scheduling_of(job: CustomJobPb) -> str:  # type: ignore[valid-type]
    name = _enum_name(aiplatform_v1.Scheduling.Strategy, job.job_spec.scheduling.strategy)
    return name if name in quota_metrics.PREEMPTIBLE else "STANDARD"


def job_needs(job: CustomJobPb) -> dict[str, int]:  # type: ignore[valid-type]
    pools = [(_enum_name(aiplatform_v1.AcceleratorType, p.machine_spec.accelerator_type),
              p.machine_spec.accelerator_count, p.replica_count)
             for p in job.job_spec.worker_pool_specs]
    return needs(pools, scheduling_of(job))


def region_usage(jobs: JobStore, project: str, region: str) -> dict[str, int]:
    """What the region's unfinished jobs hold, by metric."""
    used: dict[str, int] = {}
    for record in jobs.list(project, region):
        if record.terminal:
            continue
        for metric, count in job_needs(record.job).items():
            used[metric] = used.get(metric, 0) + count
    return used


def check_quota(capacity: Capacity, jobs: JobStore, project: str, region: str,
                job: CustomJobPb) -> None:  # type: ignore[valid-type]
    """Refuse the job with RESOURCE_EXHAUSTED, as Vertex does, when it would take an
    accelerator quota past its limit; the numbers travel in an ErrorInfo."""
    wanted = job_needs(job)
    if not wanted:
        return
    short = capacity.shortfall(region, wanted, region_usage(jobs, project, region))
    if short is None:
        return
    message = (f"The following quota metrics exceed quota limits: {short.metric} "
               f"(region {region}: limit {short.limit}, in use {short.usage}, requested "
               f"{short.requested}).")
    info = error_details_pb2.ErrorInfo(
        reason="QUOTA_EXCEEDED", domain="aiplatform.googleapis.com",
        metadata={"quota_metric": short.metric, "region": region, "limit": str(short.limit),
                  "usage": str(short.usage), "requested": str(short.requested),
                  "consumer": f"projects/{project}"})
    raise ApiError(grpc.StatusCode.RESOURCE_EXHAUSTED, message, [info])
