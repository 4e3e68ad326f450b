"""Cost endpoints: the estimate of a job before it is submitted.

POST /api/v1/jobs/estimate/ takes the body validate takes (the form's fields, or a CustomJob in
REST JSON) plus ``region`` and either ``hours`` or ``steps`` and ``step_time_s``, and answers in
integer micro-dollars (1 USD = 1000000): per hour and for that duration, in total and per pool
and resource, at the on-demand, spot and flex rates (null where a rate does not apply), with the
price table's source and the date its prices were read. Without a duration, the job's timeout
(Vertex's 7 days when it sets none) is used: the most it can cost, what a budget reserves.

``alternatives`` lists the same work on the other kind of accelerator (a GPU job on TPU, a TPU
job on GPUs) where a comparable configuration is valid, cheapest first, with how they were
compared in ``alternatives_basis`` (vertexplan.recommend.alternatives); it may be empty.
"""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.compose import schemas, validation
from controlplane.compose.api import (
    _team_or_none,
    check_request_body,
    require_custom_job_shape,
    result,
)
from controlplane.compose.estimates import (
    DURATION_KEYS,
    alternatives_of,
    estimate_json,
    parse_duration,
    parse_region,
)
from controlplane.compose.models import memory_policy_for
from controlplane.compose.quota_check import quota_of_checked
from controlplane.core import price_table
from vertexplan.pricing import job_estimate


class JobEstimate(APIView):
    """What a job would cost: total and per pool, at on-demand, spot and flex rates."""

    @extend_schema(request=schemas.ESTIMATE_BODY, responses={200: OpenApiTypes.OBJECT})
    def post(self, request: Request) -> Response:
        if not isinstance(request.data, dict):
            raise ValidationError({"": ["a JSON object: the job (as for validate) plus region "
                                        "and hours, or steps and step_time_s"]})
        data = {k: v for k, v in request.data.items() if k not in DURATION_KEYS}
        extra = {k: request.data[k] for k in DURATION_KEYS if k in request.data}
        if validation.is_custom_job(data):
            require_custom_job_shape(data)
            region = parse_region(data.pop("region", None) or request.query_params.get(
                "region") or settings.VERTEX_REGION)
            team = _team_or_none(request.user, request.query_params.get("team"))
            checked = validation.check_custom_job(data, team, region=region,
                                                memory_policy=memory_policy_for(team))
            checked.errors.pop("team", None)
        else:
            region = parse_region(data.get("region") or settings.VERTEX_REGION)
            data["region"] = region
            checked = check_request_body(request, data, require_team=False)
        if not checked.ok or checked.composition is None:
            raise ValidationError({**result(checked)["errors"]} or {"": ["invalid job"]})
        custom_job = checked.composition.custom_job
        duration = parse_duration(extra, price_table.timeout_hours(custom_job))
        try:
            estimate = price_table.estimate(custom_job, region)
        except job_estimate.PricingError as exc:
            raise ValidationError({"region": [str(p) for p in exc.problems]}) from exc
        # Beside the price, whether the project's quota in the region allows it now.
        return Response({**estimate_json(estimate, duration, alternatives_of(checked, duration)),
                         "quota": quota_of_checked(checked)})
