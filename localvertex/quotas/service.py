"""google.api.cloudquotas.v1.CloudQuotas, read side: ListQuotaInfos and GetQuotaInfo for
aiplatform.googleapis.com's training accelerator quotas, from the emulator's Capacity.

Like the real API it reports limits only (no usage). A metric with no limit set in a region
reports -1 there: unlimited.
"""

from __future__ import annotations

import re

from google.cloud.cloudquotas_v1.types import cloudquotas, resources

from contract.quota_metrics import SERVICE as SERVICE_NAME
from contract.quota_metrics import all_metrics
from localvertex.core.errors import invalid, not_found
from localvertex.quotas.capacity import Capacity, quota_id_for

SERVICE = "google.api.cloudquotas.v1.CloudQuotas"
_PARENT = re.compile(r"^projects/([^/]+)/locations/global/services/([^/]+)$")
_NAME = re.compile(r"^(projects/[^/]+/locations/global/services/[^/]+)/quotaInfos/([^/]+)$")
UNLIMITED = -1


class QuotasService:
    def __init__(self, capacity: Capacity) -> None:
        self.capacity = capacity

    def _info(self, parent: str, metric: str) -> resources.QuotaInfo:
        quota_id = quota_id_for(metric)
        limits = {region: value for (m, region), value in self.capacity.limits().items()
                  if m == metric}
        infos = [resources.DimensionsInfo(
            dimensions={"region": region}, details=resources.QuotaDetails(value=value),
            applicable_locations=[region]) for region, value in sorted(limits.items()) if region]
        # No region dimension: the value of every region not listed above.
        infos.append(resources.DimensionsInfo(
            details=resources.QuotaDetails(value=limits.get("", UNLIMITED))))
        suffix = metric.rsplit("/", 1)[-1]
        return resources.QuotaInfo(
            name=f"{parent}/quotaInfos/{quota_id}", quota_id=quota_id, metric=metric,
            service=SERVICE_NAME, is_precise=True,
            container_type=resources.QuotaInfo.ContainerType.PROJECT,
            dimensions=["region"], metric_display_name=suffix.replace("_", " "),
            quota_display_name=suffix.replace("_", " ") + " per region",
            metric_unit="1", is_fixed=False, is_concurrent=True, dimensions_infos=infos)

    def list_quota_infos(self, request, context):
        match = _PARENT.match(request.parent)
        if match is None:
            raise invalid(f"parent {request.parent!r} is not "
                          "projects/PROJECT/locations/global/services/SERVICE")
        infos = ([self._info(request.parent, m) for m in all_metrics()]
                 if match.group(2) == SERVICE_NAME else [])
        return cloudquotas.ListQuotaInfosResponse.pb(
            cloudquotas.ListQuotaInfosResponse(quota_infos=infos))

    def get_quota_info(self, request, context):
        match = _NAME.match(request.name)
        if match is None:
            raise invalid(f"name {request.name!r} is not "
                          ".../services/SERVICE/quotaInfos/QUOTA_ID")
        for metric in all_metrics():
            if quota_id_for(metric) == match.group(2):
                return resources.QuotaInfo.pb(self._info(match.group(1), metric))
        raise not_found(f"quota {match.group(2)} not found")

    def methods(self) -> dict[str, tuple[object, type]]:
        return {
            "ListQuotaInfos": (self.list_quota_infos, cloudquotas.ListQuotaInfosRequest.pb()),
            "GetQuotaInfo": (self.get_quota_info, cloudquotas.GetQuotaInfoRequest.pb()),
        }
