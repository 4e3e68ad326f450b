"""REST API of a model's runtime trials (api.py routes it):

    models/<id>/trials/   GET the model's trials, newest first, each with its table and choice;
                          POST start one: the machine type (and GPUs) it is to be deployed on
                          and the endpoint's expected traffic (trials.py, runtime_choice.py)

Team-scoped as the model is: another team's model is a 404, a viewer's POST a 403. Bad input
is a 400 naming the field and its limit; nothing is started then.
"""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.core.idempotency import idempotent
from controlplane.core.serializers import StrictSerializer
from controlplane.serving import access, trials
from controlplane.serving.trial_models import RuntimeTrial
from vertexplan import runtime_choice

LIMITS = runtime_choice.LIMITS


def _bounded(name: str, default: int, help_text: str) -> serializers.IntegerField:
    low, high = LIMITS[name]
    return serializers.IntegerField(min_value=low, max_value=high, default=default,
                                    help_text=f"{help_text} ({low} to {high}).")


class StartTrialSerializer(StrictSerializer):
    machine_type = serializers.CharField(max_length=64, help_text="The machine type the model "
                                         "is to be deployed on (n1-standard-4, g2-standard-8).")
    accelerator_type = serializers.CharField(max_length=64, required=False, allow_blank=True,
                                             default="")
    accelerator_count = serializers.IntegerField(min_value=0, max_value=16, default=0)
    prompt_tokens = _bounded("prompt_tokens", 32, "Tokens in each request's prompt")
    output_tokens = _bounded("output_tokens", 16, "Tokens each request generates")
    concurrency = _bounded("concurrency", 4, "Requests in flight at once")
    requests = _bounded("requests", 16, "Requests measured per runtime")
    p99_target_ms = _bounded("p99_target_ms", 1000, "The p99 latency a runtime must meet, "
                             "in milliseconds")


class RuntimeTrialSerializer(serializers.ModelSerializer):
    state = serializers.CharField(read_only=True)
    model = serializers.IntegerField(source="model_entry_id", read_only=True)
    results = serializers.JSONField(read_only=True, help_text=(
        "One row per runtime, in the candidates' order: runtime, tokens_per_s, p50_ms, p99_ms, "
        "requests, errors, start_s, note (why a runtime has no figures), "
        "cost_per_million_micros (micro-dollars per million generated tokens at the machine's "
        "hourly price), meets_target."))

    class Meta:
        model = RuntimeTrial
        fields = ["id", "model", "machine_type", "accelerator_type", "accelerator_count",
                  "prompt_tokens", "output_tokens", "concurrency", "requests", "p99_target_ms",
                  "runtimes", "hourly_micros", "state", "job_name", "results",
                  "chosen_runtime", "choice_reason", "error_message", "created_at",
                  "finished_at"]
        read_only_fields = fields


class ModelTrials(APIView):
    def _entry(self, request: Request, pk: int) -> Any:
        return get_object_or_404(access.visible_entries(request.user), pk=pk)

    @extend_schema(responses={200: RuntimeTrialSerializer(many=True)})
    def get(self, request: Request, pk: int) -> Response:
        entry = self._entry(request, pk)
        return Response(RuntimeTrialSerializer(entry.runtime_trials.all()[:50], many=True).data)

    @extend_schema(request=StartTrialSerializer, responses={201: RuntimeTrialSerializer})
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        entry = self._entry(request, pk)
        if not access.can_change(request.user, entry.team):
            raise PermissionDenied("your role in this team cannot change serving resources")
        body = StartTrialSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        try:
            traffic = runtime_choice.Traffic(**{k: data.pop(k) for k in LIMITS})
            trial = trials.start(entry, request.user, traffic=traffic, **data)
        except (runtime_choice.TrafficError, trials.TrialError) as exc:
            raise ValidationError({exc.field: [str(exc)]}) from exc
        return Response(RuntimeTrialSerializer(trial).data, status=status.HTTP_201_CREATED)
