"""REST API for teams and their members.

    teams/                           GET the caller's teams with the caller's role in each
    teams/<team>/members/            GET the members (any member); POST add one (admins):
                                     {"username", "role"}
    teams/<team>/members/<id>/       GET one; PATCH {"role"} (admins); DELETE remove (admins)
    teams/<team>/policy/             GET what the team's jobs may use (any member); PATCH it
                                     (admins): output_prefix, service_accounts, networks,
                                     reservations, allow_web_access
    teams/<team>/tracking/           GET where the team's jobs log runs (any member); PATCH it
                                     (admins): wandb_entity, wandb_project, wandb_api_key
                                     (write-only: reads say only wandb_api_key_set)

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

from controlplane.core.idempotency import idempotent
from controlplane.security import audit
from controlplane.teams import access
from controlplane.teams import membership as members
from controlplane.teams import policy as team_policy
from controlplane.teams import tracking as team_tracking
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
    @idempotent
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


class PolicySerializer(serializers.Serializer):
    output_prefix = serializers.CharField(
        required=False, allow_blank=True, max_length=1024,
        help_text="gs://bucket/folder the team's jobs write under; empty: the default "
                  "<CP_OUTPUT_URI>/<team>/. Never inside or around another team's.")
    service_accounts = serializers.ListField(
        child=serializers.CharField(max_length=300), required=False, max_length=50,
        help_text="Service accounts the team's jobs may run as; each serves one team only.")
    networks = serializers.ListField(child=serializers.CharField(max_length=300),
                                     required=False, max_length=50)
    reservations = serializers.ListField(child=serializers.CharField(max_length=300),
                                         required=False, max_length=50)
    allow_web_access = serializers.BooleanField(required=False)
    delete_idle_clusters_after_min = serializers.IntegerField(
        required=False,
        help_text="Delete the team's running clusters idle this many minutes (no Ray job "
                  "queued or running, no job placed on them): 0 never (the default), else "
                  "10 to 10080 (a week).")
    queue_wait_alert_min = serializers.IntegerField(
        required=False,
        help_text="Tell the team's Slack channels that hear of the queue when a job has "
                  "waited in the queue in front of Vertex this many minutes (once per wait): "
                  "0 never (the default), else 15 to 10080 (a week).")
    hang_k = serializers.IntegerField(
        required=False,
        help_text="A running job silent for max(hang_k x the p95 of its step intervals, "
                  "hang_floor_s) is a suspected hang: 2 to 100 (default 10).")
    hang_floor_s = serializers.IntegerField(
        required=False,
        help_text="The least silence, in seconds, taken for a hang: 60 to 86400 (default 300).")
    restart_on_hang = serializers.BooleanField(
        required=False,
        help_text="Restart a suspected hang from its newest committed checkpoint (cancel, "
                  "resubmit); off (the default): only alerted.")


class TeamPolicyView(generics.GenericAPIView):
    serializer_class = PolicySerializer

    @extend_schema(responses={200: PolicySerializer})
    def get(self, request: Request, team: str) -> Response:
        return Response(team_policy.describe(_team(request, team)))

    @extend_schema(request=PolicySerializer, responses={200: PolicySerializer})
    def patch(self, request: Request, team: str) -> Response:
        found = _team(request, team)
        if not access.can_manage(request.user, found):
            raise PermissionDenied(f"only the admins of team {found.slug!r} set its policy")
        if not isinstance(request.data, dict):
            raise ValidationError({"non_field_errors": ["a JSON object of policy fields"]})
        unknown = sorted(set(request.data) - set(PolicySerializer().fields))
        if unknown:
            raise ValidationError({name: ["unknown field"] for name in unknown})
        body = PolicySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        before = team_policy.describe(found)
        try:
            row = team_policy.update(found, dict(body.validated_data))
        except team_policy.PolicyError as exc:
            raise ValidationError(exc.errors) from exc
        after = team_policy.describe(found)
        audit.record(request, "policy.update", row, team=found,
                     detail={"was": before, "now": after})
        return Response(after)


class TrackingSerializer(serializers.Serializer):
    wandb_entity = serializers.CharField(
        required=False, allow_blank=True, max_length=128,
        help_text="The W&B entity (user or team) the team's jobs log runs under.")
    wandb_project = serializers.CharField(
        required=False, allow_blank=True, max_length=128,
        help_text="The W&B project; empty: the team's jobs do not log to W&B.")
    wandb_api_key = serializers.CharField(
        required=False, allow_blank=True, write_only=True, max_length=200,
        trim_whitespace=False,
        help_text="The W&B API key jobs log with; write-only, stored encrypted, empty to "
                  "remove it. Without one, jobs log offline (synced later with wandb sync).")
    wandb_api_key_set = serializers.BooleanField(read_only=True)


class TeamTrackingView(generics.GenericAPIView):
    serializer_class = TrackingSerializer

    @extend_schema(responses={200: TrackingSerializer})
    def get(self, request: Request, team: str) -> Response:
        return Response(team_tracking.describe(_team(request, team)))

    @extend_schema(request=TrackingSerializer, responses={200: TrackingSerializer})
    def patch(self, request: Request, team: str) -> Response:
        found = _team(request, team)
        if not access.can_manage(request.user, found):
            raise PermissionDenied(f"only the admins of team {found.slug!r} set its tracking")
        if not isinstance(request.data, dict):
            raise ValidationError({"non_field_errors": ["a JSON object of tracking fields"]})
        unknown = sorted(set(request.data) - set(team_tracking.FIELDS))
        if unknown:
            raise ValidationError({name: ["unknown field"] for name in unknown})
        before = team_tracking.describe(found)
        try:
            # The service checks the values as sent: a number is not a name, even as text.
            row = team_tracking.update(found, dict(request.data))
        except team_tracking.TrackingError as exc:
            raise ValidationError(exc.errors) from exc
        after = team_tracking.describe(found)
        # What describe() says never holds the key: the audit log records only whether one is.
        audit.record(request, "tracking.update", row, team=found,
                     detail={"was": before, "now": after})
        return Response(after)
