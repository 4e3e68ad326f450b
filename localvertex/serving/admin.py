"""localvertex.v1.Admin calls for endpoints (served with admin/service.py's, one service):

SetEndpointLatency {"endpoint_id", "extra_ms"}   slow every prediction of an endpoint on purpose
                                                 (0 removes it)
GetEndpointReplicas {"endpoint_id"}              each deployed model's ready ports and pids
"""

from __future__ import annotations

import grpc

from localvertex.core.errors import invalid, not_found
from localvertex.serving.deployments import Deployments


class ServingAdmin:
    def __init__(self, deployments: Deployments) -> None:
        self.deployments = deployments

    @staticmethod
    def _endpoint_id(request: dict) -> str:
        endpoint_id = str(request.get("endpoint_id", "")).rsplit("/", 1)[-1]
        if not endpoint_id:
            raise invalid("endpoint_id is required")
        return endpoint_id

    def set_endpoint_latency(self, request: dict, context: grpc.ServicerContext) -> dict:
        endpoint_id = self._endpoint_id(request)
        try:
            extra_ms = float(request.get("extra_ms", 0))
        except (TypeError, ValueError) as exc:
            raise invalid("extra_ms must be a number") from exc
        if not 0 <= extra_ms <= 600_000:
            raise invalid("extra_ms must be between 0 and 600000")
        self.deployments.set_extra_latency(endpoint_id, extra_ms)
        return {"endpoint_id": endpoint_id, "extra_ms": extra_ms}

    def get_endpoint_replicas(self, request: dict, context: grpc.ServicerContext) -> dict:
        endpoint_id = self._endpoint_id(request)
        found = [e for e in self.deployments.endpoints.select()
                 if e.name.rsplit("/", 1)[-1] == endpoint_id]
        if not found:
            raise not_found(f"endpoint {endpoint_id} not found")
        return {
            "endpoint_id": endpoint_id,
            "extra_ms": self.deployments.extra_latency_s(found[0].name) * 1000,
            "deployed_models": self.deployments.describe(found[0]),
        }

    def methods(self) -> dict[str, object]:
        return {
            "SetEndpointLatency": self.set_endpoint_latency,
            "GetEndpointReplicas": self.get_endpoint_replicas,
        }
