"""The queue in front of Vertex in the API: GET /api/v1/queue/ (your teams' waiting and holding
jobs), and a team's quota: GET /api/v1/teams/<team>/quotas/ (the
team's admins and site admins), PUT (site admins only: a team's admins must not raise their
own share). A quota below what the team's jobs hold now is accepted: running jobs go on, and
the answer says that no new job of the team starts until it is below."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.runs import admission
from controlplane.security import audit
from controlplane.teams import access, scope
from controlplane.teams import quotas as team_quotas
from controlplane.teams.models import Role, Team, TeamQuota


def _site_admin(user: Any) -> bool:
    return bool(user.is_authenticated and user.is_staff)


def _team(user: Any, slug: str) -> Team:
    """Site admins see every team; anyone else a team of theirs (404 for any other)."""
    if _site_admin(user):
        return get_object_or_404(Team, slug=slug)
    return get_object_or_404(access.teams_of(user), slug=slug)


def _answer(team: Team) -> dict[str, Any]:
    quota = TeamQuota.objects.filter(team=team).first()
    return {**team_quotas.as_dict(team, quota), "over": admission.over_quota(team, quota)}


class TeamQuotaView(APIView):
    """GET the team's quota: per accelerator type, region and spot/on-demand, its guarantee
    and borrowing limit; the highest priority its jobs may ask for; whether its jobs without
    checkpoints may be stopped for another team; and `over`, each flavor where its jobs hold
    more than the quota allows now (they run on; no new one starts). PUT replaces it (site
    admins only)."""

    @extend_schema(responses={200: dict})
    def get(self, request: Request, team: str) -> Response:
        found = _team(request.user, team)
        if not _site_admin(request.user) and access.role_in(request.user, found) != Role.ADMIN:
            raise PermissionDenied("only the team's admins and site admins see its quotas")
        return Response(_answer(found))

    @extend_schema(request=dict, responses={200: dict})
    def put(self, request: Request, team: str) -> Response:
        found = _team(request.user, team)
        narrowed = scope.of(request.user)
        if not _site_admin(request.user) or (narrowed is not None and narrowed.read_only):
            raise PermissionDenied("only site admins set a team's quotas")
        values, errors = team_quotas.parse(request.data)
        if errors:
            raise ValidationError(errors)
        quota, _ = TeamQuota.objects.update_or_create(
            team=found, defaults={**values, "updated_at": timezone.now()})
        audit.record(request, "quota.update", quota, team=found, detail=values)
        return Response(_answer(found))


class QueueEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    team = serializers.CharField()
    state = serializers.CharField(help_text="QUEUED_LOCAL: waiting here; else on Vertex")
    priority = serializers.CharField(help_text="low, normal or high")
    place = serializers.IntegerField(allow_null=True,
                                     help_text="1 = the next to start; null unless waiting")
    reason = serializers.CharField(allow_blank=True, help_text="why it waits")
    earliest_start = serializers.DateTimeField(
        allow_null=True, help_text="the soonest it could start by the running jobs' timeouts "
                                   "(the jobs ahead of it may make it later); null: unknown")
    borrowing = serializers.BooleanField(
        help_text="holds accelerators beyond its team's guarantee (may be stopped at a "
                  "checkpoint for another team's guarantee)")
    accelerators = serializers.CharField()


class QueueView(APIView):
    """The queue in front of Vertex as your teams see it: jobs waiting here in place order,
    with why, then the jobs holding accelerators on Vertex (borrowing or not)."""

    @extend_schema(parameters=[OpenApiParameter("team", str, description="a team's slug")],
                   responses={200: QueueEntrySerializer(many=True)})
    def get(self, request: Request) -> Response:
        team_ids = list(access.teams_of(request.user).values_list("pk", flat=True))
        rows = admission.queue_rows(team_ids, request.query_params.get("team") or None)
        return Response(QueueEntrySerializer(rows, many=True).data)
