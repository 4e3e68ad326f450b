"""A team's monthly budget (GET: members; PUT: team admins) and its spend this month."""

from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from controlplane.costs.models import MAX_BUDGET_MICROS, BudgetAction, TeamBudget
from controlplane.costs.standing import spend_series, summary
from controlplane.security import audit
from controlplane.teams import access
from controlplane.teams.models import Role, Team


class BudgetSerializer(serializers.Serializer):
    monthly_budget_micros = serializers.IntegerField(
        min_value=0, max_value=MAX_BUDGET_MICROS,
        help_text="Integer micro-dollars a month (1 USD = 1000000).")
    on_exceed = serializers.ChoiceField(choices=BudgetAction.choices,
                                        default=BudgetAction.NOTIFY)


def team_for(user: Any, slug: str) -> Team:
    """A team of the caller's (404 for any other)."""
    return get_object_or_404(access.teams_of(user), slug=slug)


def save_budget(team: Team, user: Any, monthly_micros: int, on_exceed: str) -> TeamBudget:
    if access.role_in(user, team) != Role.ADMIN:
        raise PermissionDenied("only the team's admins can change its budget")
    budget, _ = TeamBudget.objects.update_or_create(team=team, defaults={
        "monthly_micros": monthly_micros, "on_exceed": on_exceed, "updated_by": user,
        "updated_at": timezone.now()})
    return budget


class TeamBudgetView(APIView):
    """GET the budget and the month's standing; PUT {monthly_budget_micros, on_exceed} (team
    admins); DELETE removes the budget."""

    @extend_schema(responses={200: dict})
    def get(self, request: Request, team: str) -> Response:
        return Response(summary(team_for(request.user, team)))

    @extend_schema(request=BudgetSerializer, responses={200: dict})
    def put(self, request: Request, team: str) -> Response:
        found = team_for(request.user, team)
        body = BudgetSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        budget = save_budget(found, request.user, body.validated_data["monthly_budget_micros"],
                             body.validated_data["on_exceed"])
        audit.record(request, "budget.update", budget, team=found,
                     detail={"monthly_micros": budget.monthly_micros,
                             "on_exceed": budget.on_exceed})
        return Response(summary(found))

    @extend_schema(responses={204: None})
    def delete(self, request: Request, team: str) -> Response:
        found = team_for(request.user, team)
        if access.role_in(request.user, found) != Role.ADMIN:
            raise PermissionDenied("only the team's admins can change its budget")
        if TeamBudget.objects.filter(team=found).delete()[0]:
            audit.record(request, "budget.delete", team=found)
        return Response(status=204)


class TeamSpendView(APIView):
    """The month's spend per day, by job and by accelerator (cumulative micro-dollars)."""

    @extend_schema(responses={200: dict})
    def get(self, request: Request, team: str) -> Response:
        return Response(spend_series(team_for(request.user, team)))
