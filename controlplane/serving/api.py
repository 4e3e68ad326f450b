"""REST API for serving, under /api/v1/serving/ (config/api_urls.py includes this module):

    images/?team=                    GET the serving images the team may pick
    models/                          GET list, POST register a job's checkpoint or final export,
                                     or a Hugging Face model folder (format hf; runtime vllm)
    models/<id>/                     GET
    models/<id>/trials/              GET the model's runtime trials, POST start one
                                     (trial_api.py)
    endpoints/                       GET list, POST create
    endpoints/<id>/                  GET, PATCH probe settings, DELETE (undeploy all, delete)
    endpoints/<id>/deployments/      GET, POST deploy a model
    endpoints/<id>/slo/              GET, PUT the SLO
    endpoints/<id>/latency/?minutes= GET p50/p95/p99 and error rate per bucket
    endpoints/<id>/samples/          GET the prober's raw samples, newest first
    endpoints/<id>/alerts/           GET SLO alerts, newest first
    endpoints/<id>/predict/          POST {"instances": [...]} through the endpoint
    endpoints/<id>/openai/v1/...     OpenAI's API through the endpoint (openai_api.py):
                                     POST chat/completions, POST completions, GET models
    deployments/<id>/                GET, PATCH autoscaling (min/max replicas, metric, target)
    deployments/<id>/undeploy/       POST
    jobs/<id>/                       GET the job's models, endpoints and their latency
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.urls import path, re_path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.backends import errors
from controlplane.core import bounded
from controlplane.core.idempotency import idempotent
from controlplane.runs import access as runs_access
from controlplane.runs.api import resolve_team
from controlplane.serving import (
    access,
    charts,
    images,
    latency_table,
    lifecycle,
    openai_api,
    predictions,
    registry,
    trial_api,
)
from controlplane.serving.models import Deployment, Endpoint, ModelEntry, Slo, SloAlert
from controlplane.serving.serializers import (
    AlertSerializer,
    AutoscalingSerializer,
    CreateEndpointSerializer,
    DeploymentSerializer,
    DeploySerializer,
    EndpointSerializer,
    ModelEntrySerializer,
    PredictSerializer,
    ProbeSettingsSerializer,
    RegisterModelSerializer,
    SampleSerializer,
    ServingImagesSerializer,
    SloSerializer,
)
from controlplane.teams import access as team_access
from vertexplan.digits import ascii_int

MINUTES_PARAMETER = OpenApiParameter(
    "minutes", {"type": "integer", "minimum": charts.MIN_MINUTES, "maximum": charts.MAX_MINUTES},
    description="The chart's window, default 60.")


def _minutes(request: Request) -> int:
    """The API's window: a whole number in range, or a 400 naming ``minutes`` (the pages
    clamp instead: charts.window)."""
    raw = request.query_params.get("minutes", "")
    if raw == "":
        return 60
    minutes = ascii_int(raw, max_digits=6)
    if minutes is None or not charts.MIN_MINUTES <= minutes <= charts.MAX_MINUTES:
        raise ValidationError({"minutes": [f"a whole number of minutes from "
                                           f"{charts.MIN_MINUTES} to {charts.MAX_MINUTES}"]})
    return minutes


def _may_change(user: Any, team: Any) -> None:
    if not access.can_change(user, team):
        raise PermissionDenied("your role in this team cannot change serving resources")


def _endpoint(request: Request, pk: int) -> Endpoint:
    return get_object_or_404(access.visible_endpoints(request.user), pk=pk)


class ModelList(generics.ListCreateAPIView):
    serializer_class = ModelEntrySerializer

    def get_queryset(self) -> QuerySet[ModelEntry]:
        entries = access.visible_entries(self.request.user)
        job = bounded.id_param(self.request.query_params, "job")
        return entries if job is None else entries.filter(job_id=job)

    @extend_schema(request=RegisterModelSerializer, responses={201: ModelEntrySerializer})
    @idempotent
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = RegisterModelSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        job, team = None, None
        if data["job"] is not None:
            job = get_object_or_404(runs_access.visible_jobs(request.user), pk=data["job"])
            _may_change(request.user, job.team)
        elif data["format"] == ModelEntry.Format.HF:
            team = resolve_team(request.user, data.get("team"))
            _may_change(request.user, team)
        vllm = {k: data[k] for k in RegisterModelSerializer.VLLM_FIELDS if k in data}
        try:
            entry = registry.register(job=job, user=request.user, step=data["step"],
                                      display_name=data.get("display_name", ""),
                                      runtime=data["runtime"],
                                      image_uri=data.get("image_uri", ""),
                                      format=data["format"], artifact_uri=data["artifact_uri"],
                                      team=team, vllm=vllm)
        except registry.RegistryError as exc:
            raise ValidationError({exc.field: [str(exc)]}) from exc
        except errors.TransientBackendError as exc:  # the model folder could not be read now
            return Response({"detail": f"{exc}; nothing was registered, try again"},
                            status=status.HTTP_503_SERVICE_UNAVAILABLE)
        return Response(ModelEntrySerializer(entry).data, status=status.HTTP_201_CREATED)


class ModelDetail(generics.RetrieveAPIView):
    serializer_class = ModelEntrySerializer

    def get_queryset(self) -> QuerySet[ModelEntry]:
        return access.visible_entries(self.request.user)


class EndpointList(generics.ListCreateAPIView):
    serializer_class = EndpointSerializer

    def get_queryset(self) -> QuerySet[Endpoint]:
        return access.visible_endpoints(self.request.user).exclude(state=Endpoint.State.DELETED)

    @extend_schema(request=CreateEndpointSerializer, responses={201: EndpointSerializer})
    @idempotent
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = CreateEndpointSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        team = resolve_team(request.user, data.pop("team", None))
        endpoint = lifecycle.create_endpoint(team=team, user=request.user, **data)
        return Response(EndpointSerializer(endpoint).data, status=status.HTTP_201_CREATED)


class EndpointDetail(APIView):
    @extend_schema(responses=EndpointSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(EndpointSerializer(_endpoint(request, pk)).data)

    @extend_schema(request=ProbeSettingsSerializer, responses=EndpointSerializer)
    def patch(self, request: Request, pk: int) -> Response:
        endpoint = _endpoint(request, pk)
        _may_change(request.user, endpoint.team)
        body = ProbeSettingsSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        for field, value in body.validated_data.items():
            setattr(endpoint, field, value)
        # A new rate applies from the next tick, not after the old interval runs out.
        endpoint.next_probe_at = None
        endpoint.save(update_fields=[*body.validated_data, "next_probe_at"])
        return Response(EndpointSerializer(endpoint).data)

    @extend_schema(request=None, responses={202: EndpointSerializer})
    def delete(self, request: Request, pk: int) -> Response:
        endpoint = _endpoint(request, pk)
        _may_change(request.user, endpoint.team)
        lifecycle.request_delete(endpoint)
        endpoint.refresh_from_db()
        return Response(EndpointSerializer(endpoint).data, status=status.HTTP_202_ACCEPTED)


class EndpointDeployments(APIView):
    @extend_schema(responses=DeploymentSerializer(many=True))
    def get(self, request: Request, pk: int) -> Response:
        endpoint = _endpoint(request, pk)
        return Response(DeploymentSerializer(endpoint.deployments.all(), many=True).data)

    @extend_schema(request=DeploySerializer, responses={201: DeploymentSerializer})
    @idempotent
    def post(self, request: Request, pk: int) -> Response:
        endpoint = _endpoint(request, pk)
        _may_change(request.user, endpoint.team)
        body = DeploySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        entry = get_object_or_404(access.visible_entries(request.user), pk=data.pop("model"))
        try:
            deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=request.user,
                                          **data)
        except lifecycle.ServingError as exc:
            raise ValidationError({exc.field or "detail": [str(exc)]}) from exc
        return Response(DeploymentSerializer(deployment).data, status=status.HTTP_201_CREATED)


class DeploymentDetail(APIView):
    def _get(self, request: Request, pk: int) -> Deployment:
        return get_object_or_404(access.visible_deployments(request.user), pk=pk)

    @extend_schema(responses=DeploymentSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(DeploymentSerializer(self._get(request, pk)).data)

    @extend_schema(request=AutoscalingSerializer, responses={202: DeploymentSerializer})
    def patch(self, request: Request, pk: int) -> Response:
        deployment = self._get(request, pk)
        _may_change(request.user, deployment.endpoint.team)
        body = AutoscalingSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            lifecycle.set_autoscaling(deployment, **body.validated_data)
        except lifecycle.ServingError as exc:
            raise ValidationError({"detail": [str(exc)]}) from exc
        deployment.refresh_from_db()
        return Response(DeploymentSerializer(deployment).data, status=status.HTTP_202_ACCEPTED)


class DeploymentUndeploy(APIView):
    @extend_schema(request=None, responses={202: DeploymentSerializer})
    def post(self, request: Request, pk: int) -> Response:
        deployment = get_object_or_404(access.visible_deployments(request.user), pk=pk)
        _may_change(request.user, deployment.endpoint.team)
        try:
            lifecycle.request_undeploy(deployment)
        except lifecycle.ServingError as exc:
            raise ValidationError({"detail": [str(exc)]}) from exc
        deployment.refresh_from_db()
        return Response(DeploymentSerializer(deployment).data, status=status.HTTP_202_ACCEPTED)


class EndpointSlo(APIView):
    @extend_schema(responses=SloSerializer)
    def get(self, request: Request, pk: int) -> Response:
        slo = get_object_or_404(Slo, endpoint=_endpoint(request, pk))
        return Response(SloSerializer(slo).data)

    @extend_schema(request=SloSerializer, responses=SloSerializer)
    def put(self, request: Request, pk: int) -> Response:
        endpoint = _endpoint(request, pk)
        _may_change(request.user, endpoint.team)
        existing = Slo.objects.filter(endpoint=endpoint).first()
        body = SloSerializer(existing, data=request.data)
        body.is_valid(raise_exception=True)
        slo = body.save(endpoint=endpoint)
        return Response(SloSerializer(slo).data)


class EndpointLatency(APIView):
    @extend_schema(parameters=[MINUTES_PARAMETER],
                   responses={200: dict})
    def get(self, request: Request, pk: int) -> Response:
        endpoint = _endpoint(request, pk)
        minutes = _minutes(request)
        return Response(charts.endpoint_latency(endpoint, minutes))


class EndpointSamples(generics.ListAPIView):
    serializer_class = SampleSerializer

    def get_queryset(self) -> QuerySet[Any]:
        endpoint = _endpoint(self.request, self.kwargs["pk"])
        return endpoint.latency_samples.order_by("-at", "-id")


class EndpointAlerts(generics.ListAPIView):
    serializer_class = AlertSerializer

    def get_queryset(self) -> QuerySet[Any]:
        endpoint = _endpoint(self.request, self.kwargs["pk"])
        return SloAlert.objects.filter(slo__endpoint=endpoint).prefetch_related(
            "notifications__channel")


class EndpointPredict(APIView):
    # The schema's extra answers (controlplane.core.openapi).
    conflicts = ("No model is deployed to the endpoint, it is private (reachable only "
                 "from its allowlisted VPCs), or its traffic is split between Triton and "
                 "another runtime.")
    upstream = "Vertex's prediction service failed; the detail says how."

    @extend_schema(request=PredictSerializer, responses={200: dict})
    def post(self, request: Request, pk: int) -> Response:
        endpoint = _endpoint(request, pk)
        _may_change(request.user, endpoint.team)
        if endpoint.state != Endpoint.State.READY:
            raise ValidationError({"detail": [f"the endpoint is {endpoint.state}"]})
        if not endpoint.deployments.filter(state=Deployment.State.DEPLOYED).exists():
            return Response({"detail": "no model is deployed to this endpoint: deploy one "
                                       "first"}, status=status.HTTP_409_CONFLICT)
        if endpoint.access == Endpoint.Access.PRIVATE:
            return Response({"detail": "a private endpoint answers only inside the VPCs of "
                             "its allowlisted projects, through a Private Service Connect "
                             "endpoint on its service attachment "
                             f"({endpoint.service_attachment or 'not known yet'}): send the "
                             "prediction from there"}, status=status.HTTP_409_CONFLICT)
        body = PredictSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            result = predictions.predict(endpoint, body.validated_data["instances"],
                                         body.validated_data.get("parameters"))
        except predictions.BadInstance as exc:
            raise ValidationError({"instances": [str(exc)]}) from exc
        except predictions.MixedRuntimes as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except errors.BackendError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_502_BAD_GATEWAY)
        return Response({"predictions": result.predictions,
                         "deployed_model_id": result.deployed_model_id})


class JobServing(APIView):
    @extend_schema(parameters=[MINUTES_PARAMETER],
                   responses={200: dict})
    def get(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(runs_access.visible_jobs(request.user), pk=pk)
        minutes = _minutes(request)
        entries = ModelEntry.objects.filter(job=job)
        return Response({
            "models": ModelEntrySerializer(entries, many=True).data,
            "checkpoint_steps": registry.checkpoint_steps(job),
            # What the job page's table shows: each endpoint serving the job's models now.
            "serving_now": [row.as_dict() for row in latency_table.for_job(job)],
            **charts.job_latency(job, minutes),
        })


class ServingImages(APIView):
    not_found = "No team of the caller's by that slug."

    @extend_schema(parameters=[OpenApiParameter(
        "team", str, required=True, description="The team's slug.")],
        responses={200: ServingImagesSerializer})
    def get(self, request: Request) -> Response:
        """The serving images a team may pick: its own Artifact Registry repositories (those
        labelled cp-team=<team>) and Google's prebuilt prediction containers."""
        if "team" not in request.query_params:
            raise ValidationError({"team": ["name the team whose images to list: ?team=<slug>"]})
        slug = request.query_params["team"]
        # A team of someone else's is not found, as its objects are not (nothing leaks).
        team = team_access.teams_of(request.user).filter(slug=slug).first() if slug else None
        if team is None:
            raise NotFound(f"no team of yours is named {slug!r}: ?team=<one of your teams>")
        found, unreadable = images.team_images(team)
        return Response(ServingImagesSerializer({
            "team": team.slug, "unreadable": unreadable,
            "images": [{"uri": i.uri, "tags": list(i.tags), "source": i.source}
                       for i in found]}).data)


urlpatterns = [
    path("images/", ServingImages.as_view(), name="api-serving-images"),
    path("models/", ModelList.as_view(), name="api-serving-models"),
    path("models/<int:pk>/", ModelDetail.as_view(), name="api-serving-model"),
    path("models/<int:pk>/trials/", trial_api.ModelTrials.as_view(),
         name="api-serving-model-trials"),
    path("endpoints/", EndpointList.as_view(), name="api-serving-endpoints"),
    path("endpoints/<int:pk>/", EndpointDetail.as_view(), name="api-serving-endpoint"),
    path("endpoints/<int:pk>/deployments/", EndpointDeployments.as_view(),
         name="api-serving-deployments"),
    path("endpoints/<int:pk>/slo/", EndpointSlo.as_view(), name="api-serving-slo"),
    path("endpoints/<int:pk>/latency/", EndpointLatency.as_view(), name="api-serving-latency"),
    path("endpoints/<int:pk>/samples/", EndpointSamples.as_view(), name="api-serving-samples"),
    path("endpoints/<int:pk>/alerts/", EndpointAlerts.as_view(), name="api-serving-alerts"),
    path("endpoints/<int:pk>/predict/", EndpointPredict.as_view(), name="api-serving-predict"),
    # OpenAI's paths (no trailing slash: its clients append them to base_url as they are).
    path("endpoints/<int:pk>/openai/v1/chat/completions", openai_api.ChatCompletions.as_view(),
         name="api-serving-openai-chat"),
    path("endpoints/<int:pk>/openai/v1/completions", openai_api.Completions.as_view(),
         name="api-serving-openai-completions"),
    path("endpoints/<int:pk>/openai/v1/models", openai_api.Models.as_view(),
         name="api-serving-openai-models"),
    re_path(r"^endpoints/(?P<pk>[^/]+)/openai/v1/(?P<route>chat/completions|completions|models)$",
            openai_api.UnknownEndpoint.as_view(), name="api-serving-openai-unknown"),
    path("deployments/<int:pk>/", DeploymentDetail.as_view(), name="api-serving-deployment"),
    path("deployments/<int:pk>/undeploy/", DeploymentUndeploy.as_view(),
         name="api-serving-undeploy"),
    path("jobs/<int:pk>/", JobServing.as_view(), name="api-serving-job"),
]
