"""localvertex.v1.Admin: what Vertex does not offer but tests need (JSON in, JSON out).

PreemptJob {"job_id", "grace_s": 30}        spot preemption of every replica of a RUNNING job
           {..., "at_step": N}              armed: preempt when a replica reports step N or later
SetFaults  {"method", "code", "rate"}       fail a fraction of API calls ("*": every method)
GetJob     {"job_id"}                       restart and preemption counts, replicas' pids
SetQuota   {"metric", "region", "limit"}    an accelerator quota's limit ("" region: all others)
InjectStockout {"region", "count", "scheduling"}  the next COUNT jobs starting in REGION (on
                                            SCHEDULING, or any) fail with a STOCKOUT
PushImage {"uri": "L-docker.pkg.dev/P/R/IMAGE:TAG"}  an image Artifact Registry lists
                                            (serving/artifact_registry.py)
"""

from __future__ import annotations

import json

import grpc

from localvertex.admin.faults import FaultInjector
from localvertex.core.errors import failed_precondition, invalid, not_found
from localvertex.jobs.manager import JobManager
from localvertex.jobs.store import JobState
from localvertex.quotas.capacity import SERVICE_NAME

SERVICE = "localvertex.v1.Admin"


def decode(raw: bytes) -> dict:
    try:
        value = json.loads(raw or b"{}")
    except ValueError as exc:
        raise invalid(f"request is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise invalid("request must be a JSON object")
    return value


def encode(value: dict) -> bytes:
    return json.dumps(value).encode()


class AdminService:
    def __init__(self, manager: JobManager, faults: FaultInjector) -> None:
        self.manager = manager
        self.faults = faults

    def _job_id(self, request: dict) -> str:
        job_id = str(request.get("job_id", "")).rsplit("/", 1)[-1]
        if not job_id:
            raise invalid("job_id is required")
        return job_id

    def preempt_job(self, request: dict, context: grpc.ServicerContext) -> dict:
        job_id = self._job_id(request)
        grace = float(request.get("grace_s", self.manager.settings.preempt_grace_s))
        if grace < 0:
            raise invalid("grace_s must not be negative")
        record = self.manager.jobs.get(job_id)
        if record is None:
            raise not_found(f"job {job_id} not found")
        at_step = request.get("at_step")
        if at_step is not None:
            if not isinstance(at_step, int) or isinstance(at_step, bool) or at_step < 0:
                raise invalid("at_step must be a non-negative integer")
            if record.terminal or not self.manager.preempt(job_id, grace, at_step):
                raise failed_precondition(
                    f"job {job_id} is {JobState(record.state).name}; a preemption is armed only "
                    "for a job that has not ended"
                )
            return {"job_id": job_id, "grace_s": grace, "at_step": at_step}
        if record.state != JobState.JOB_STATE_RUNNING or not self.manager.preempt(job_id, grace):
            raise failed_precondition(
                f"job {job_id} is {JobState(record.state).name}; only a running job is preempted"
            )
        return {"job_id": job_id, "grace_s": grace}

    def set_faults(self, request: dict, context: grpc.ServicerContext) -> dict:
        try:
            self.faults.set(
                str(request.get("method", "*")),
                str(request.get("code", "UNAVAILABLE")),
                float(request.get("rate", 1.0)),
            )
        except ValueError as exc:
            raise invalid(str(exc)) from exc
        return {"faults": self.faults.snapshot()}

    def set_quota(self, request: dict, context: grpc.ServicerContext) -> dict:
        metric = str(request.get("metric", ""))
        if not metric:
            raise invalid("metric is required")
        if "/" not in metric:
            metric = f"{SERVICE_NAME}/{metric}"
        limit = request.get("limit")
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise invalid("limit must be a non-negative integer")
        region = str(request.get("region", ""))
        self.manager.capacity.set_limit(metric, region, limit)
        return {"metric": metric, "region": region, "limit": limit}

    def inject_stockout(self, request: dict, context: grpc.ServicerContext) -> dict:
        region = str(request.get("region", ""))
        count = request.get("count", 1)
        scheduling = str(request.get("scheduling", ""))
        if not region:
            raise invalid("region is required")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise invalid("count must be a non-negative integer")
        if scheduling not in ("", "SPOT", "FLEX_START", "STANDARD"):
            raise invalid("scheduling must be SPOT, FLEX_START, STANDARD or empty")
        self.manager.capacity.arm_stockouts(region, count, scheduling)
        return {"stockouts": self.manager.capacity.stockouts()}

    def get_job(self, request: dict, context: grpc.ServicerContext) -> dict:
        job_id = self._job_id(request)
        record = self.manager.jobs.get(job_id)
        if record is None:
            raise not_found(f"job {job_id} not found")
        live = self.manager.live_pids(job_id)
        replicas = {
            task: {**info, "pid": live.get(task, info.get("pid"))}
            for task, info in record.replicas.items()
        }
        return {
            "job_id": job_id,
            "state": JobState(record.state).name,
            "restart_count": record.restart_count,
            "preemption_count": record.preemption_count,
            "replicas": replicas,
        }

    def methods(self) -> dict[str, object]:
        return {
            "PreemptJob": self.preempt_job,
            "SetFaults": self.set_faults,
            "GetJob": self.get_job,
            "SetQuota": self.set_quota,
            "InjectStockout": self.inject_stockout,
        }
