"""A team's costs page: this month's spend by job and by accelerator (Plotly), the budget and
what it does when crossed; admins change the budget here."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from controlplane.costs import goodput_views, spend
from controlplane.costs.budgets_api import save_budget
from controlplane.costs.models import BudgetAction, TeamBudget
from controlplane.costs.standing import spend_series, summary
from controlplane.runs.models import Job, JobKind
from controlplane.security import audit
from controlplane.teams import access
from controlplane.teams.models import Role

CENT = Decimal("0.01")


class BudgetForm(forms.Form):
    # Empty removes the budget (the API's DELETE): a cleared field that kept the old budget
    # said one thing and did another.
    monthly_usd = forms.DecimalField(label="Monthly budget (USD)", min_value=Decimal(0),
                                     max_digits=14, decimal_places=2, required=False,
                                     help_text="Leave empty for no budget.")
    on_exceed = forms.ChoiceField(label="When the month's spend crosses it",
                                  choices=BudgetAction.choices)

    def micros(self) -> int | None:
        """The budget in micro-dollars; None to remove it."""
        if self.cleaned_data["monthly_usd"] is None:
            return None
        try:
            return int(self.cleaned_data["monthly_usd"] * 1_000_000)
        except (InvalidOperation, TypeError) as exc:
            raise forms.ValidationError("not an amount") from exc


@login_required
def team_costs(request: HttpRequest, team: str) -> HttpResponse:
    team_obj = get_object_or_404(access.teams_of(request.user), slug=team)
    admin = access.role_in(request.user, team_obj) == Role.ADMIN
    budget = TeamBudget.objects.filter(team=team_obj).first()
    # Shown to the cent, as it is entered: the current budget is the field's value.
    initial = {"monthly_usd": (Decimal(budget.monthly_micros) / 1_000_000).quantize(CENT),
               "on_exceed": budget.on_exceed} if budget else {"on_exceed": BudgetAction.NOTIFY}
    form = BudgetForm(request.POST or None, initial=initial) if admin else None
    if request.method == "POST":
        if form is None:
            raise PermissionDenied("only the team's admins can change its budget")
        if form.is_valid():
            micros = form.micros()
            if micros is None:
                if TeamBudget.objects.filter(team=team_obj).delete()[0]:
                    audit.record(request, "budget.delete", team=team_obj)
                messages.success(request, f"{team_obj.name} has no budget now.")
                return redirect("team-costs", team=team_obj.slug)
            saved = save_budget(team_obj, request.user, micros, form.cleaned_data["on_exceed"])
            audit.record(request, "budget.update", saved, team=team_obj,
                         detail={"monthly_micros": saved.monthly_micros,
                                 "on_exceed": saved.on_exceed})
            messages.success(request, f"Budget of {team_obj.name} saved.")
            return redirect("team-costs", team=team_obj.slug)
    jobs = Job.objects.filter(team=team_obj, kind=JobKind.JOB).order_by("-created_at")[:20]
    return render(request, "costs/team_costs.html", {
        "team": team_obj, "admin": admin, "form": form, "summary": summary(team_obj),
        "series": spend_series(team_obj), "jobs": jobs,
        "goodput": goodput_views.team_goodput(team_obj),
    }, status=400 if form is not None and form.errors else 200)


def cost_panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    """Cost so far (or final), lost compute, and the breakdown chart's data (dollars)."""
    cost = spend.cost_report(job)
    chart = None
    if cost["breakdown"] is not None:
        by_resource: dict[str, int] = {}
        for line in cost["breakdown"]["lines"]:
            by_resource[line["name"]] = by_resource.get(line["name"], 0) + line["cost"]
        chart = {"resources": list(by_resource),
                 "resource_usd": [v / 1_000_000 for v in by_resource.values()],
                 "useful_usd": cost["useful_micros"] / 1_000_000,
                 "lost_usd": cost["lost_micros"] / 1_000_000}
    return {"cost": cost, "cost_chart": chart}
