"""REST API for teams and their members.

    teams/                           GET the caller's teams with the caller's role in each
    teams/<team>/members/            GET the members (any member); POST add one (admins):
                                     {"username", "role"}
    teams/<team>/members/<id>/       GET one; PATCH {"role"} (admins); DELETE remove (admins)

A team always keeps one admin: the change that would leave none is a 400 on the field.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from controlplane.security import audit
from controlplane.teams import access
from controlplane.teams import membership as members
from controlplane.teams.models import Membership, Team


class TeamSerializer(serializers.ModelSerializer):
    role = serializers.SerializerMethodField()

    class Meta:
        model = Team
        fields = ["id", "slug", "name", "role"]
        read_only_fields = fields

    def get_role(self, team: Team) -> str:
        return access.role_in(self.context["request"].user, team) or ""


class MemberSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", max_length=150)
    role = serializers.ChoiceField(choices=members.ROLES)

    class Meta:
        model = Membership
        fields = ["id", "username", "role"]
        read_only_fields = ["id"]


class RoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=members.ROLES)


def _team(request: Request, slug: str) -> Team:
    return get_object_or_404(access.teams_of(request.user), slug=slug)


def _must_manage(request: Request, team: Team) -> None:
    if not access.can_manage(request.user, team):
        raise PermissionDenied(f"only the admins of team {team.slug!r} manage its members")


def _refused(exc: members.MembershipError) -> ValidationError:
    return ValidationError({exc.field: [exc.message]})


class TeamList(generics.ListAPIView):
    serializer_class = TeamSerializer

    def get_queryset(self) -> QuerySet[Team]:
        return access.teams_of(self.request.user).order_by("slug")


class MemberList(generics.ListCreateAPIView):
    serializer_class = MemberSerializer

    def get_queryset(self) -> QuerySet[Membership]:
        team = _team(self.request, self.kwargs["team"])
        return Membership.objects.filter(team=team).select_related("user").order_by(
            "user__username")

    @extend_schema(request=MemberSerializer, responses={201: MemberSerializer})
    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        team = _team(request, kwargs["team"])
        _must_manage(request, team)
        body = MemberSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        try:
            membership = members.add(team, body.validated_data["user"]["username"],
                                     body.validated_data["role"])
        except members.MembershipError as exc:
            raise _refused(exc) from exc
        audit.record(request, "member.add", membership, detail=members.describe(membership))
        return Response(MemberSerializer(membership).data, status=status.HTTP_201_CREATED)


class MemberDetail(generics.RetrieveDestroyAPIView):
    serializer_class = MemberSerializer

    def get_queryset(self) -> QuerySet[Membership]:
        team = _team(self.request, self.kwargs["team"])
        return Membership.objects.filter(team=team).select_related("user", "team")

    @extend_schema(request=RoleSerializer, responses={200: MemberSerializer})
    def patch(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        membership = self.get_object()
        _must_manage(request, membership.team)
        body = RoleSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        before = membership.role
        try:
            changed = members.change_role(membership, body.validated_data["role"])
        except members.MembershipError as exc:
            raise _refused(exc) from exc
        if changed:
            audit.record(request, "member.change", membership,
                         detail={**members.describe(membership), "was": before})
        return Response(MemberSerializer(membership).data)

    def perform_destroy(self, instance: Membership) -> None:
        _must_manage(self.request, instance.team)
        detail = members.describe(instance)
        try:
            members.remove(instance)
        except members.MembershipError as exc:
            raise _refused(exc) from exc
        audit.record(self.request, "member.remove", None, team=instance.team, detail=detail)
