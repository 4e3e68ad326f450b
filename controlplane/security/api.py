"""REST API for the caller's own tokens and a team's audit log.

    tokens/                      GET the caller's tokens (prefix only), POST make one (key once)
    tokens/<id>/                 GET, DELETE revoke
    teams/<team>/audit/          GET the team's audit log (team admins only); filters action,
                                 actor, since, until
    teams/, teams/<team>/members/[<id>/]   teams and their members
    (controlplane/security/teams_api.py)
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

from controlplane.core import bounded
from controlplane.core.idempotency import idempotent
from controlplane.security import audit, teams_api, tokens
from controlplane.security.models import ApiToken, AuditEntry
from controlplane.security.serializers import (
    AuditEntrySerializer,
    NewTokenSerializer,
    TokenSerializer,
)
from controlplane.teams import access
from controlplane.teams.models import Role


class TokenList(generics.ListCreateAPIView):
    serializer_class = TokenSerializer

    def get_queryset(self) -> QuerySet[ApiToken]:
        return ApiToken.objects.filter(user=self.request.user)

    @extend_schema(request=TokenSerializer, responses={201: NewTokenSerializer})
    @idempotent
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        body = TokenSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            made = tokens.create(request.user, body.validated_data["name"],
                                 expires_at=body.validated_data.get("expires_at"),
                                 team_slugs=body.validated_data.get("team_slugs", ()),
                                 read_only=body.validated_data.get("read_only", False))
        except tokens.ScopeError as exc:
            raise ValidationError({exc.field: [str(exc)]}) from exc
        audit.record(request, "token.create", made.token)
        out = NewTokenSerializer(made.token).data
        out["key"] = made.key
        return Response(out, status=status.HTTP_201_CREATED)


class TokenDetail(generics.RetrieveDestroyAPIView):
    """DELETE revokes the token; the row stays, so the list shows when it was revoked."""

    serializer_class = TokenSerializer

    def get_queryset(self) -> QuerySet[ApiToken]:
        return ApiToken.objects.filter(user=self.request.user)

    @extend_schema(responses={200: TokenSerializer})
    def delete(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        token = self.get_object()
        if not tokens.may_revoke(request.user, token):
            raise PermissionDenied("a narrowed token revokes only tokens no wider than itself, "
                                   "and a read-only one none")
        if tokens.revoke(token):
            audit.record(request, "token.revoke", token)
        return Response(TokenSerializer(token).data)


AUDIT_PARAMETERS = [
    OpenApiParameter("action", str, enum=list(audit.ACTIONS)),
    OpenApiParameter("actor", str, description="username"),
    OpenApiParameter("since", str, description="ISO 8601 date-time, inclusive"),
    OpenApiParameter("until", str, description="ISO 8601 date-time, exclusive"),
]


def _moment(name: str, raw: str) -> Any:
    return bounded.moment(name, raw)


@extend_schema(parameters=AUDIT_PARAMETERS)
class TeamAudit(generics.ListAPIView):
    """Who submitted, cancelled, cloned and resubmitted jobs, and who changed the team's
    channels, templates and budgets; newest first. Team admins only."""

    serializer_class = AuditEntrySerializer

    def get_queryset(self) -> QuerySet[AuditEntry]:
        team = get_object_or_404(access.teams_of(self.request.user), slug=self.kwargs["team"])
        if access.role_in(self.request.user, team) != Role.ADMIN:
            raise PermissionDenied("only the team's admins read its audit log")
        entries = AuditEntry.objects.filter(team=team)
        params = self.request.query_params
        if params.get("action"):
            if params["action"] not in audit.ACTIONS:
                raise ValidationError({"action": [f"one of: {', '.join(audit.ACTIONS)}"]})
            entries = entries.filter(action=params["action"])
        if params.get("actor"):
            entries = entries.filter(actor_name=params["actor"])
        if params.get("since"):
            entries = entries.filter(at__gte=_moment("since", params["since"]))
        if params.get("until"):
            entries = entries.filter(at__lt=_moment("until", params["until"]))
        return entries


urlpatterns = [
    path("tokens/", TokenList.as_view(), name="api-token-list"),
    path("tokens/<int:pk>/", TokenDetail.as_view(), name="api-token-detail"),
    path("teams/<slug:team>/audit/", TeamAudit.as_view(), name="api-team-audit"),
    path("teams/", teams_api.TeamList.as_view(), name="api-team-list"),
    path("teams/<slug:team>/members/", teams_api.MemberList.as_view(),
         name="api-member-list"),
    path("teams/<slug:team>/members/<int:pk>/", teams_api.MemberDetail.as_view(),
         name="api-member-detail"),
    path("teams/<slug:team>/policy/", teams_api.TeamPolicyView.as_view(),
         name="api-team-policy"),
    path("teams/<slug:team>/tracking/", teams_api.TeamTrackingView.as_view(),
         name="api-team-tracking"),
]
