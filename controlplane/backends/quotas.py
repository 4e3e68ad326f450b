"""Quota limits from the Cloud Quotas API (google-cloud-quotas): Vertex AI's training quotas per
region, read with Google's own client against Google or the emulator, and cached (the limits
change rarely; every compose page and validate call reads them).

The API reports limits only, not usage (VERTEX_FACTS.md, A3): what a job will find free is its
limit less what the project's other jobs hold, which the callers know.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from google.cloud.cloudquotas_v1 import CloudQuotasClient
from google.cloud.cloudquotas_v1.services.cloud_quotas.transports import (
    CloudQuotasGrpcTransport,
)

from controlplane.backends import clients
from controlplane.backends.training import translated_errors

SERVICE = "aiplatform.googleapis.com"
UNLIMITED = -1
_CACHE_VERSION = 1


@dataclass(frozen=True)
class Limit:
    metric: str
    region: str
    value: int | None      # None: the API names no value for the region (treat as unknown)
    quota_id: str
    display_name: str

    @property
    def unlimited(self) -> bool:
        return self.value is not None and self.value < 0


def _client() -> CloudQuotasClient:
    channel = clients.emulator_channel()
    if channel is not None:
        return CloudQuotasClient(transport=CloudQuotasGrpcTransport(channel=channel))
    return CloudQuotasClient()


def _read(project: str) -> dict[str, dict]:
    """metric -> {"quota_id", "display", "regions": {region or "": value}} from the API."""
    parent = f"projects/{project}/locations/global/services/{SERVICE}"
    out: dict[str, dict] = {}
    with translated_errors("ListQuotaInfos"):
        for info in _client().list_quota_infos(parent=parent, retry=None,
                                               timeout=settings.VERTEX_RPC_TIMEOUT_S):
            regions = {}
            for dims in info.dimensions_infos:
                region = dict(dims.dimensions).get("region", "")
                regions[region] = int(dims.details.value)
            out[info.metric] = {"quota_id": info.quota_id,
                                "display": info.quota_display_name or info.metric,
                                "regions": regions}
    return out


def all_limits(project: str | None = None) -> dict[str, dict]:
    """Every training quota of the project, cached for CP_QUOTA_CACHE_S."""
    project = project or settings.VERTEX_PROJECT
    key = f"cp-quotas:{_CACHE_VERSION}:{settings.VERTEX_EMULATOR_ADDR}:{project}"
    found = cache.get(key) if settings.CP_QUOTA_CACHE_S > 0 else None
    if found is None:
        found = _read(project)
        if settings.CP_QUOTA_CACHE_S > 0:
            cache.set(key, found, settings.CP_QUOTA_CACHE_S)
    return found


def limit(metric: str, region: str, project: str | None = None) -> Limit | None:
    """The limit of `metric` in `region`; None when the API does not know the metric.

    Raises errors.BackendError subclasses when the API cannot be read."""
    info = all_limits(project).get(metric)
    if info is None:
        return None
    regions = info["regions"]
    value = regions.get(region, regions.get(""))
    return Limit(metric, region, value, info["quota_id"], info["display"])


def clear_cache(project: str | None = None) -> None:
    project = project or settings.VERTEX_PROJECT
    cache.delete(f"cp-quotas:{_CACHE_VERSION}:{settings.VERTEX_EMULATOR_ADDR}:{project}")

