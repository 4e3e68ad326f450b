"""REST API for clusters, under /api/v1/clusters/ (config/api_urls.py includes this module):

    /                       GET list (live ones; ?all=1 also deleted), POST create
    <id>/                   GET, PATCH {"replicas": {pool id: count}}, DELETE (202)
    ray-jobs/               GET list, POST submit a Ray job to a cluster
    ray-jobs/<id>/          GET
    ray-jobs/<id>/logs/     GET the driver's output; ?q= (any case) and ?severity= (this level
                            and above, as a level the line states) pick lines from it
    ray-jobs/<id>/stop/     POST
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.clusters import access, lifecycle
from controlplane.clusters.models import Cluster, RayJob
from controlplane.clusters.serializers import (
    ClusterSerializer,
    CreateClusterSerializer,
    RayJobSerializer,
    ReplicasSerializer,
    SubmitRayJobSerializer,
)
from controlplane.core.idempotency import idempotent
from controlplane.logs.queries import BadFilter, LogFilter
from controlplane.runs.api import resolve_team
from vertexplan.clusters import ray_logs
from vertexplan.logparse.entries import SEVERITY_NUMBERS

# The newest matching lines returned one by one (the whole output stays under `logs`).
MAX_LOG_LINES = 2000


def _may_change(user: Any, team: Any) -> None:
    if not access.can_change(user, team):
        raise PermissionDenied("your role in this team cannot change clusters")


def _cluster(request: Request, pk: int) -> Cluster:
    return get_object_or_404(access.visible_clusters(request.user), pk=pk)


class ClusterList(generics.ListCreateAPIView):
    serializer_class = ClusterSerializer

    def get_queryset(self) -> QuerySet[Cluster]:
        clusters = access.visible_clusters(self.request.user)
        if self.request.query_params.get("all") == "1":
            return clusters
        return clusters.exclude(state__in=[Cluster.State.DELETED, Cluster.State.FAILED])

    @extend_schema(request=CreateClusterSerializer, responses={201: ClusterSerializer})
    @idempotent
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = CreateClusterSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        team = resolve_team(request.user, data.pop("team", None))
        try:
            cluster = lifecycle.create_cluster(team=team, user=request.user, request=data)
        except lifecycle.ClusterError as exc:
            raise ValidationError(exc.fields) from exc
        return Response(ClusterSerializer(cluster).data, status=status.HTTP_201_CREATED)


class ClusterDetail(APIView):
    @extend_schema(responses=ClusterSerializer)
    def get(self, request: Request, pk: int) -> Response:
        return Response(ClusterSerializer(_cluster(request, pk)).data)

    @extend_schema(request=ReplicasSerializer, responses={202: ClusterSerializer})
    def patch(self, request: Request, pk: int) -> Response:
        cluster = _cluster(request, pk)
        _may_change(request.user, cluster.team)
        body = ReplicasSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            cluster = lifecycle.set_replicas(cluster, body.validated_data["replicas"])
        except lifecycle.ClusterError as exc:
            raise ValidationError(exc.fields) from exc
        return Response(ClusterSerializer(cluster).data, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses={202: ClusterSerializer})
    def delete(self, request: Request, pk: int) -> Response:
        cluster = _cluster(request, pk)
        _may_change(request.user, cluster.team)
        lifecycle.request_delete(cluster)
        cluster.refresh_from_db()
        return Response(ClusterSerializer(cluster).data, status=status.HTTP_202_ACCEPTED)


class RayJobList(generics.ListCreateAPIView):
    serializer_class = RayJobSerializer

    def get_queryset(self) -> QuerySet[RayJob]:
        return access.visible_ray_jobs(self.request.user)

    @extend_schema(request=SubmitRayJobSerializer, responses={201: RayJobSerializer})
    @idempotent
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = SubmitRayJobSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = dict(body.validated_data)
        # Another team's cluster is not found, as its id in a URL would be (ids leak nothing).
        cluster = get_object_or_404(access.visible_clusters(request.user), pk=data.pop("cluster"))
        _may_change(request.user, cluster.team)
        try:
            job = lifecycle.submit_ray_job(cluster=cluster, user=request.user, **data)
        except lifecycle.ClusterError as exc:
            raise ValidationError(exc.fields) from exc
        return Response(RayJobSerializer(job).data, status=status.HTTP_201_CREATED)


class RayJobDetail(generics.RetrieveAPIView):
    serializer_class = RayJobSerializer

    def get_queryset(self) -> QuerySet[RayJob]:
        return access.visible_ray_jobs(self.request.user)


class RayJobLogs(APIView):
    @extend_schema(
        parameters=[
            OpenApiParameter("severity", {"oneOf": [
                {"type": "string", "enum": list(SEVERITY_NUMBERS)},
                {"type": "integer", "minimum": 0, "maximum": 9999}]},
                description="this level and above, as the line states it (a logging level, "
                            "a Python warning, a traceback); a line that states none is INFO"),
            OpenApiParameter("q", str, description="substring of the line, any case"),
        ],
        responses={200: {"type": "object", "properties": {
            "logs": {"type": "string",
                     "description": "the driver's output; with a filter, its matching lines"},
            "matched": {"type": "integer"},
            "lines": {"type": "array", "description": "the newest matching lines",
                      "items": {"type": "object", "properties": {
                          "number": {"type": "integer"}, "severity": {"type": "integer"},
                          "text": {"type": "string"}}}},
        }}})
    def get(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(access.visible_ray_jobs(request.user), pk=pk)
        try:
            wanted = LogFilter.from_params(request.query_params)
        except BadFilter as exc:
            raise ValidationError({exc.field: [str(exc)]}) from exc
        needle = wanted.q.casefold()
        found = [line for line in ray_logs.lines(job.logs)
                 if line.severity >= (wanted.severity or 0)
                 and (not needle or needle in line.text.casefold())]
        filtered = bool(wanted.severity or needle)
        return Response({
            "logs": "\n".join(line.text for line in found) if filtered else job.logs,
            "matched": len(found),
            "lines": [{"number": line.number, "severity": line.severity, "text": line.text}
                      for line in found[-MAX_LOG_LINES:]],
        })


class RayJobStop(APIView):
    @extend_schema(request=None, responses={202: RayJobSerializer})
    def post(self, request: Request, pk: int) -> Response:
        job = get_object_or_404(access.visible_ray_jobs(request.user), pk=pk)
        _may_change(request.user, job.team)
        lifecycle.request_stop(job)
        job.refresh_from_db()
        return Response(RayJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


urlpatterns = [
    path("", ClusterList.as_view(), name="api-clusters"),
    path("<int:pk>/", ClusterDetail.as_view(), name="api-cluster"),
    path("ray-jobs/", RayJobList.as_view(), name="api-ray-jobs"),
    path("ray-jobs/<int:pk>/", RayJobDetail.as_view(), name="api-ray-job"),
    path("ray-jobs/<int:pk>/logs/", RayJobLogs.as_view(), name="api-ray-job-logs"),
    path("ray-jobs/<int:pk>/stop/", RayJobStop.as_view(), name="api-ray-job-stop"),
]
