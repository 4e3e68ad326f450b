"""The queue page: the jobs of your teams waiting in front of Vertex (place, why) and those
holding accelerators on Vertex (borrowing beyond the team's guarantee marked), with each
team's quota and where its running jobs hold more than the quota now allows."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from controlplane.runs import admission
from controlplane.teams import access
from controlplane.teams.models import Team, TeamQuota


@require_GET
@login_required
def queue_page(request: HttpRequest) -> HttpResponse:
    """Per site (site admins: every team) or per team (?team=slug)."""
    teams = Team.objects.all() if request.user.is_staff else access.teams_of(request.user)
    slug = request.GET.get("team") or None
    if slug:
        teams = teams.filter(slug=slug)
    teams = list(teams.order_by("slug"))
    rows = admission.queue_rows([t.pk for t in teams])
    quotas = {q.team_id: q for q in TeamQuota.objects.filter(team__in=teams)}
    standing = [{"team": t, "quota": quotas.get(t.pk),
                 "over": admission.over_quota(t, quotas.get(t.pk))} for t in teams]
    return render(request, "runs/queue.html", {
        "waiting": [r for r in rows if r["state"] == "QUEUED_LOCAL"],
        "holding": [r for r in rows if r["state"] != "QUEUED_LOCAL"],
        "standing": standing, "team": slug, "enabled": admission.enabled()})
