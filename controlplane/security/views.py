"""Pages: the user's API tokens (make one, see it once, revoke), the user's teams and their
members (admins add, change and remove), and a team's audit log."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.dateparse import parse_date
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from controlplane.security import audit, tokens
from controlplane.security.models import ApiToken, AuditEntry
from controlplane.teams import access
from controlplane.teams import membership as members
from controlplane.teams import tracking as team_tracking
from controlplane.teams.models import Membership, Role, Team

AUDIT_PAGE = 100


@login_required
@require_http_methods(["GET", "POST"])
def token_list(request: HttpRequest) -> HttpResponse:
    new_key = ""
    error = ""
    if request.method == "POST":
        name = (request.POST.get("name") or "").strip()
        if not name:
            error = "give the token a name, e.g. the script or machine that will use it"
        else:
            try:
                made = tokens.create(request.user, name,
                                     team_slugs=request.POST.getlist("teams"),
                                     read_only=request.POST.get("read_only") == "on")
            except tokens.ScopeError as exc:
                error = f"{exc.field}: {exc}"
            else:
                audit.record(request, "token.create", made.token)
                new_key = made.key
    response = render(request, "security/tokens.html", {
        "tokens": ApiToken.objects.filter(user=request.user).prefetch_related("teams"),
        "teams": access.teams_of(request.user).order_by("name"),
        "new_key": new_key,
        "error": error,
    }, status=400 if error else 200)
    # The key is in this response only: no cache may keep it.
    response["Cache-Control"] = "no-store"
    return response


@login_required
@require_POST
def token_revoke(request: HttpRequest, pk: int) -> HttpResponse:
    token = get_object_or_404(ApiToken, user=request.user, pk=pk)
    if tokens.revoke(token):
        audit.record(request, "token.revoke", token)
        messages.success(request, f"Token {token.name} ({token.prefix}…) revoked.")
    return redirect("token-list")


@login_required
@require_GET
def team_audit(request: HttpRequest, team: str) -> HttpResponse:
    team_obj = get_object_or_404(access.teams_of(request.user), slug=team)
    if access.role_in(request.user, team_obj) != Role.ADMIN:
        raise PermissionDenied("only the team's admins read its audit log")
    everything = AuditEntry.objects.filter(team=team_obj)
    chosen = {key: request.GET.get(key, "").strip()[:200]
              for key in ("action", "actor", "q", "since", "until")}
    entries, error = _audit_filtered(everything, chosen)
    page = Paginator(entries, AUDIT_PAGE).get_page(request.GET.get("page"))
    return render(request, "security/audit.html", {
        "team": team_obj, "page": page, "chosen": chosen, "filter_error": error,
        "actions": everything.order_by("action").values_list("action", flat=True).distinct(),
        "actors": everything.order_by("actor_name").values_list("actor_name",
                                                               flat=True).distinct(),
    })


def _audit_filtered(entries: Any, chosen: dict[str, str]) -> tuple[Any, str]:
    """The audit log narrowed by action, who, text in the object, and a date range (UTC
    days, the end inclusive); a date that does not parse is named, the rest still apply."""
    if chosen["action"]:
        entries = entries.filter(action=chosen["action"])
    if chosen["actor"]:
        entries = entries.filter(actor_name=chosen["actor"])
    if chosen["q"]:
        entries = entries.filter(Q(target_name__icontains=chosen["q"])
                                 | Q(target_id=chosen["q"]) | Q(target_type=chosen["q"]))
    error = ""
    for key, lookup in (("since", "at__date__gte"), ("until", "at__date__lte")):
        if not chosen[key]:
            continue
        try:
            day = parse_date(chosen[key])
        except ValueError:
            day = None
        if day is None:
            error = f"{key}: a date as YYYY-MM-DD, not {chosen[key]!r}"
            continue
        entries = entries.filter(**{lookup: day})
    return entries, error


@login_required
@require_GET
def team_list(request: HttpRequest) -> HttpResponse:
    memberships = (Membership.objects.filter(user=request.user)
                   .select_related("team").order_by("team__slug"))
    return render(request, "security/teams.html", {"memberships": memberships})


@login_required
@require_http_methods(["GET", "POST"])
def team_members(request: HttpRequest, team: str) -> HttpResponse:
    """Everyone in the team sees who is in it; admins add, change roles and remove (POST with
    action=add|role|remove). A refused change shows why and changes nothing."""
    team_obj = get_object_or_404(access.teams_of(request.user), slug=team)
    manages = access.can_manage(request.user, team_obj)
    error, status = "", 200
    if request.method == "POST":
        if not manages:
            raise PermissionDenied(f"only the admins of team {team_obj.slug} manage its members")
        try:
            _change_members(request, team_obj)
            return redirect("team-members", team=team_obj.slug)
        except members.MembershipError as exc:
            error, status = str(exc), 400
    return render(request, "security/members.html", {
        "team": team_obj,
        "manages": manages,
        "members": Membership.objects.filter(team=team_obj).select_related("user")
                                     .order_by("user__username"),
        "roles": members.ROLES,
        "error": error,
        "form": request.POST if error else {},
    }, status=status)


def _change_members(request: HttpRequest, team: Team) -> None:
    action = request.POST.get("action")
    if action == "add":
        made = members.add(team, request.POST.get("username", ""), request.POST.get("role", ""))
        audit.record(request, "member.add", made, detail=members.describe(made))
        messages.success(request, f"{made.name} joined {team.name} as {made.role}.")
        return
    membership = Membership.objects.filter(team=team, pk=request.POST.get("member") or 0
                                           ).select_related("user", "team").first()
    if membership is None:
        raise members.MembershipError("member", "no such member of this team")
    if action == "role":
        before = membership.role
        if members.change_role(membership, request.POST.get("role", "")):
            audit.record(request, "member.change", membership,
                         detail={**members.describe(membership), "was": before})
            messages.success(request, f"{membership.name} is now {membership.role}.")
    elif action == "remove":
        detail = members.describe(membership)
        members.remove(membership)
        audit.record(request, "member.remove", None, team=team, detail=detail)
        messages.success(request, f"{detail['username']} left {team.name}.")
    else:
        raise members.MembershipError("action", "one of: add, role, remove")


@login_required
@require_http_methods(["GET", "POST"])
def team_tracking_settings(request: HttpRequest, team: str) -> HttpResponse:
    """Where the team's jobs log runs (W&B): everyone in the team sees the entity, the project
    and whether a key is set; admins change them. The key is never shown, not even to them:
    the form's key field starts empty, and left empty keeps the stored key."""
    team_obj = get_object_or_404(access.teams_of(request.user), slug=team)
    manages = access.can_manage(request.user, team_obj)
    errors: dict[str, list[str]] = {}
    if request.method == "POST":
        if not manages:
            raise PermissionDenied(f"only the admins of team {team_obj.slug} set its tracking")
        changes = {name: request.POST.get(name, "") for name in ("wandb_entity", "wandb_project")}
        if request.POST.get("remove_key"):
            changes["wandb_api_key"] = ""
        elif request.POST.get("wandb_api_key"):
            changes["wandb_api_key"] = request.POST["wandb_api_key"]
        before = team_tracking.describe(team_obj)
        try:
            row = team_tracking.update(team_obj, changes)
        except team_tracking.TrackingError as exc:
            errors = exc.errors
        else:
            audit.record(request, "tracking.update", row, team=team_obj,
                         detail={"was": before, "now": team_tracking.describe(team_obj)})
            messages.success(request, f"{team_obj.name}'s W&B settings saved.")
            return redirect("team-tracking", team=team_obj.slug)
    current = team_tracking.describe(team_obj)
    shown = ({name: request.POST.get(name, "") for name in ("wandb_entity", "wandb_project")}
             if errors else current)
    return render(request, "security/tracking.html", {
        "team": team_obj, "manages": manages, "current": current, "shown": shown,
        "errors": errors}, status=400 if errors else 200)
