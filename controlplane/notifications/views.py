"""A team's Slack channels: members see them (with why one was disabled); admins manage."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from controlplane.notifications.forms import ChannelForm
from controlplane.notifications.models import SlackChannel
from controlplane.security import audit
from controlplane.teams import access
from controlplane.teams.models import Role, Team


def _team(request: HttpRequest, slug: str) -> tuple[Team, bool]:
    team = get_object_or_404(access.teams_of(request.user), slug=slug)
    return team, access.role_in(request.user, team) == Role.ADMIN


def _admin_team(request: HttpRequest, slug: str) -> Team:
    team, admin = _team(request, slug)
    if not admin:
        raise PermissionDenied("only the team's admins manage its Slack channels")
    return team


@login_required
def channel_list(request: HttpRequest, team: str) -> HttpResponse:
    team_obj, admin = _team(request, team)
    form = None
    if admin:
        form = ChannelForm(request.POST or None, instance=SlackChannel(team=team_obj))
        if request.method == "POST" and form.is_valid():
            channel = form.save(commit=False)
            channel.created_by = request.user
            channel.save()
            audit.record(request, "channel.create", channel)
            messages.success(request, f"Slack channel {channel.name} added.")
            return redirect("notification-channels", team=team_obj.slug)
    elif request.method == "POST":
        raise PermissionDenied("only the team's admins manage its Slack channels")
    return render(request, "notifications/channel_list.html", {
        "team": team_obj, "is_admin": admin, "form": form,
        "channels": SlackChannel.objects.filter(team=team_obj),
    }, status=400 if form is not None and form.errors else 200)


@login_required
def channel_edit(request: HttpRequest, team: str, pk: int) -> HttpResponse:
    team_obj = _admin_team(request, team)
    channel = get_object_or_404(SlackChannel, team=team_obj, pk=pk)
    form = ChannelForm(request.POST or None, instance=channel)
    if request.method == "POST" and form.is_valid():
        form.save()
        audit.record(request, "channel.update", channel,
                     detail={"fields": sorted(form.changed_data)})
        messages.success(request, f"Slack channel {channel.name} saved.")
        return redirect("notification-channels", team=team_obj.slug)
    context: dict[str, Any] = {"team": team_obj, "channel": channel, "form": form}
    return render(request, "notifications/channel_edit.html", context,
                  status=400 if form.errors else 200)


@login_required
@require_POST
def channel_delete(request: HttpRequest, team: str, pk: int) -> HttpResponse:
    team_obj = _admin_team(request, team)
    channel = get_object_or_404(SlackChannel, team=team_obj, pk=pk)
    audit.record(request, "channel.delete", channel)
    channel.delete()
    messages.success(request, f"Slack channel {channel.name} removed.")
    return redirect("notification-channels", team=team_obj.slug)
