"""POST /api/v1/jobs/recommend/: the cheapest valid configurations that fit a model, ranked.

The body gives the model (parameters, precision and optionally its shape), a strategy ("any" for
ddp/zero2/fsdp/zero3 on GPUs, or one strategy, tpu_jax/tpu_xla for TPU slices), a region, and
either ``hours`` or ``steps`` x ``step_time_s`` measured on ``reference_devices`` x
``reference_device`` (with an optional ``deadline_hours``). The answer ranks configurations by
total cost in integer micro-dollars (1 USD = 1000000), each with its cost at every scheduling
strategy (null where it does not apply), its memory per device against the device's memory,
and the job request that opens it in the compose form; with the price table's source and date.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any
from urllib.parse import urlencode

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.core import price_table
from controlplane.core.serializers import CheckpointingField, StrictSerializer
from controlplane.teams import access
from vertexplan import memory, recommend
from vertexplan.pricing import RATE_NAMES, Totals

MAX_HOURS = Decimal(24 * 366)
MAX_LIMIT = 50
MONEY = "integer micro-dollars (1 USD = 1000000)"


def _choice(values: tuple[str, ...], **kwargs: Any) -> serializers.ChoiceField:
    """A choice whose error names every valid value."""
    return serializers.ChoiceField(
        choices=list(values), error_messages={
            "invalid_choice": f'"{{input}}" is not valid; valid values: {", ".join(values)}'},
        **kwargs)


def _count(help_text: str, **kwargs: Any) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, required=False, help_text=help_text, **kwargs)


def _positive(help_text: str, limit: Decimal = MAX_HOURS) -> serializers.DecimalField:
    return serializers.DecimalField(max_digits=18, decimal_places=6, required=False,
                                    min_value=Decimal("0.000001"), max_value=limit,
                                    help_text=help_text)


class RecommendRequestSerializer(StrictSerializer):
    parameters = serializers.IntegerField(min_value=1, help_text="Total parameter count.")
    precision = _choice(memory.DTYPES, default="bf16", help_text="Training precision.")
    trainable_parameters = _count("Parameters the optimizer updates (default: all).")
    largest_layer_parameters = _count("Parameters of the largest layer (ZeRO-3/FSDP gather).")
    hidden_size = _count("With layers and sequence_length: activations are planned too.")
    layers = _count("Transformer layers.")
    sequence_length = _count("Tokens per sample.")
    attention_heads = _count("Attention heads (default: hidden_size / 128).")
    vocab_size = _count("Vocabulary size.")
    micro_batch_size = serializers.IntegerField(min_value=1, default=1,
                                                help_text="Micro batch per device.")
    activation_checkpointing = CheckpointingField(default="none")
    strategy = _choice(recommend.STRATEGY_CHOICES, default=recommend.ANY,
                       help_text='"any": the first of ddp, zero2, fsdp, zero3 that fits, on '
                                 "GPUs; tpu_jax/tpu_xla: TPU slices.")
    region = serializers.CharField(help_text="A region of the price table.")
    hours = _positive("Hours every configuration runs; or give steps and step_time_s.")
    steps = _count("Training steps (with step_time_s and reference_device).")
    step_time_s = _positive("Seconds a step takes on the reference configuration.",
                            Decimal(86400))
    reference_device = _choice(recommend.DEVICES, required=False,
                               help_text="The device step_time_s was measured on.")
    reference_devices = serializers.IntegerField(min_value=1, default=1,
                                                 help_text="How many of them.")
    deadline_hours = _positive("Drop configurations that would take longer.")
    schedules = serializers.ListField(
        child=serializers.CharField(), required=False, allow_empty=False,
        help_text=f"Scheduling strategies to consider: {', '.join(recommend.SCHEDULES)} (all "
                  "by default).")
    max_nodes = serializers.IntegerField(min_value=1, max_value=recommend.MAX_NODES,
                                         default=recommend.DEFAULT_MAX_NODES)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_LIMIT,
                                     default=recommend.DEFAULT_LIMIT)
    image_uri = serializers.CharField(required=False, allow_blank=True, max_length=512)
    command = serializers.ListField(child=serializers.CharField(), required=False)

    def validate_region(self, value: str) -> str:
        priced = price_table.current_table().regions
        if value not in priced:
            raise serializers.ValidationError(
                f"{value!r} has no prices; valid values: {', '.join(priced)}")
        return value

    def validate_schedules(self, value: list[str]) -> list[str]:
        unknown = [s for s in value if s not in recommend.SCHEDULES]
        if unknown:
            raise serializers.ValidationError(
                f"{', '.join(map(repr, unknown))} not valid; valid values: "
                f"{', '.join(recommend.SCHEDULES)}")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        steps_mode = [k for k in ("steps", "step_time_s", "reference_device") if k in attrs]
        if "hours" in attrs and steps_mode:
            raise serializers.ValidationError(
                {"hours": ["give hours, or steps with step_time_s and reference_device, not "
                           "both"]})
        if "hours" not in attrs:
            missing = [k for k in ("steps", "step_time_s", "reference_device")
                       if k not in attrs]
            if missing:
                what = "steps, step_time_s and reference_device together, or hours"
                raise serializers.ValidationError(
                    {key: [f"required: give {what}"] for key in missing})
        trainable = attrs.get("trainable_parameters")
        if trainable is not None and trainable > attrs["parameters"]:
            raise serializers.ValidationError(
                {"trainable_parameters": ["at most parameters"]})
        return attrs

    def query(self) -> recommend.Query:
        data = self.validated_data
        model = memory.ModelShape(
            parameters=data["parameters"], dtype=data["precision"],
            trainable_parameters=data.get("trainable_parameters"),
            largest_layer_parameters=data.get("largest_layer_parameters"),
            hidden_size=data.get("hidden_size"), layers=data.get("layers"),
            sequence_length=data.get("sequence_length"),
            attention_heads=data.get("attention_heads"), vocab_size=data.get("vocab_size"),
            micro_batch_size=data["micro_batch_size"],
            activation_checkpointing=data["activation_checkpointing"])
        workload = recommend.Workload(
            hours=data.get("hours"), steps=data.get("steps"),
            step_time_s=data.get("step_time_s"),
            reference_device=data.get("reference_device"),
            reference_devices=data["reference_devices"],
            deadline_hours=data.get("deadline_hours"))
        return recommend.Query(
            model=model, strategy=data["strategy"], region=data["region"], workload=workload,
            schedules=tuple(dict.fromkeys(data.get("schedules") or recommend.SCHEDULES)),
            max_nodes=data["max_nodes"], limit=data["limit"],
            image_uri=data.get("image_uri") or "", command=tuple(data.get("command") or ()))


def totals_json(totals: Totals) -> dict[str, int | None]:
    return {rate: totals.get(rate) for rate in RATE_NAMES}


def compose_url(request: dict[str, Any]) -> str:
    """The compose page opened with ``request`` in the form."""
    return f"{reverse('job-compose')}?{urlencode({'recommended': json.dumps(request)})}"


def _hours_text(value: Decimal) -> str:
    return f"{value.quantize(Decimal('0.0001')).normalize():f}"


def result_json(result: recommend.Recommendation) -> dict[str, Any]:
    hw = result.hardware
    plan = result.memory_plan
    return {
        "rank": result.rank,
        "label": result.label,
        "strategy": result.strategy,
        "tpu_sharding": result.tpu_sharding,
        "scheduling_strategy": result.scheduling_strategy,
        "rate": result.rate,
        "machine_type": hw.machine_type,
        "accelerator_type": hw.accelerator_type,
        "accelerator_count": hw.accelerator_count,
        "tpu_topology": hw.tpu_topology,
        "device": hw.device,
        "nodes": hw.nodes,
        "devices": hw.devices,
        "hours": _hours_text(result.hours),
        "cost": result.total,
        "costs": totals_json(result.totals),
        "hourly": totals_json(result.hourly),
        "memory": None if plan is None else {
            "per_device_gib": round(plan.total_gib, 3),
            "device_memory_gib": plan.device_memory_gib,
            "headroom_gib": None if plan.headroom_gib is None else round(plan.headroom_gib, 3),
            "fits": plan.fits,
        },
        "request": result.request,
        "compose_url": compose_url(result.request),
        "notes": result.notes,
    }


def recommendations_json(query: recommend.Query,
                         found: recommend.Recommendations) -> dict[str, Any]:
    workload = query.workload
    return {
        "currency": "USD",
        "money": MONEY,
        "region": query.region,
        "strategy": query.strategy,
        "duration": {
            "basis": "hours" if workload.hours is not None else "steps",
            "hours": None if workload.hours is None else _hours_text(workload.hours),
            "steps": workload.steps,
            "step_time_s": None if workload.step_time_s is None else _hours_text(
                workload.step_time_s),
            "reference_device": workload.reference_device,
            "reference_devices": workload.reference_devices if workload.steps else None,
            "deadline_hours": None if workload.deadline_hours is None else _hours_text(
                workload.deadline_hours),
        },
        "price_table": {"source": found.table_source, "retrieved": found.table_retrieved},
        "assumptions": found.assumptions,
        "considered": found.considered,
        "rejected": found.rejected,
        "reason": found.reason,
        "results": [result_json(r) for r in found.results],
    }


def run(data: Any) -> tuple[RecommendRequestSerializer, dict[str, Any] | None]:
    """Validate ``data`` and recommend; the answer is None when the serializer refused it."""
    serializer = RecommendRequestSerializer(data=data)
    if not serializer.is_valid():
        return serializer, None
    query = serializer.query()
    found = recommend.recommend(query, price_table.current_table())
    return serializer, recommendations_json(query, found)


class JobRecommend(APIView):
    """The cheapest valid configurations that fit the model, ranked by total cost.

    For those who can submit somewhere, as the compose form its results open in."""

    @extend_schema(request=RecommendRequestSerializer, responses={
        200: OpenApiResponse(response=dict, description="Ranked configurations, costs in "
                             + MONEY + ", with the price table's source and date."),
        400: OpenApiResponse(response=dict, description="Errors keyed by field, naming the "
                             "valid values."),
        403: OpenApiResponse(description="The caller cannot submit jobs in any team.")})
    def post(self, request: Request) -> Response:
        if not access.submit_teams(request.user).exists():
            raise PermissionDenied("your role in your teams cannot submit jobs")
        serializer, answer = run(request.data)
        if answer is None:
            return Response(serializer.errors, status=400)
        return Response(answer)
