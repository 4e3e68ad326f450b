"""A client for the emulator's admin service (service.py): what tests, the demo and benchmarks
call to preempt jobs, inject faults and stockouts, set quotas and push images; the command line
is cli.py (`python -m localvertex.admin`). The admin service listens on a port of its own
(8471 by default) and, like every service of the emulator, answers only calls that carry its
token (localvertex/auth.py)."""

from __future__ import annotations

import json

import grpc

from localvertex import auth

SERVICE = "localvertex.v1.Admin"


# What a refused admin call raises (a job between states, an unknown id): callers catch this
# and need not know the transport.
AdminError = grpc.RpcError


class AdminClient:
    def __init__(self, target: str, token: str, timeout: float = 10.0) -> None:
        self._channel = auth.channel(target, token)
        self._timeout = timeout

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> AdminClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, method: str, request: dict) -> dict:
        rpc = self._channel.unary_unary(
            f"/{SERVICE}/{method}",
            request_serializer=lambda value: json.dumps(value).encode(),
            response_deserializer=json.loads,
        )
        return rpc(request, timeout=self._timeout)

    def push_image(self, uri: str, labels: dict[str, str] | None = None) -> dict:
        """Make Artifact Registry list `uri` (LOCATION-docker.pkg.dev/P/R/IMAGE:TAG)."""
        return self.call("PushImage", {"uri": uri, "labels": labels or {}})

    def preempt(self, job_id: str, grace_s: float = 30.0, at_step: int | None = None) -> dict:
        request: dict = {"job_id": job_id, "grace_s": grace_s}
        if at_step is not None:
            request["at_step"] = at_step
        return self.call("PreemptJob", request)

    def set_faults(self, method: str = "*", code: str = "UNAVAILABLE", rate: float = 1.0) -> dict:
        """Fail `rate` of the calls to `method` with `code`; rate 0 removes the fault."""
        return self.call("SetFaults", {"method": method, "code": code, "rate": rate})

    def job(self, job_id: str) -> dict:
        return self.call("GetJob", {"job_id": job_id})

    def set_quota(self, metric: str, limit: int, region: str = "") -> dict:
        """An accelerator quota's limit in a region ("" = every region without its own)."""
        return self.call("SetQuota", {"metric": metric, "region": region, "limit": limit})

    def stockout(self, region: str, count: int = 1, scheduling: str = "") -> dict:
        """The next `count` jobs to start in `region` (on `scheduling`, or any) find no
        capacity and fail with a STOCKOUT."""
        return self.call("InjectStockout",
                         {"region": region, "count": count, "scheduling": scheduling})

    def set_endpoint_latency(self, endpoint_id: str, extra_ms: float) -> dict:
        """Add `extra_ms` to every prediction of an endpoint (0 removes it); serving/admin.py."""
        return self.call("SetEndpointLatency", {"endpoint_id": endpoint_id, "extra_ms": extra_ms})
