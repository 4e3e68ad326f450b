"""Pages: the user's API tokens (make one, see it once, revoke) and a team's audit log."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from jobs import access
from jobs.models import Role
from security import audit, tokens
from security.models import ApiToken, AuditEntry

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
            made = tokens.create(request.user, name)
            audit.record(request, "token.create", made.token)
            new_key = made.key
    response = render(request, "security/tokens.html", {
        "tokens": ApiToken.objects.filter(user=request.user),
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
    entries = AuditEntry.objects.filter(team=team_obj)
    page = Paginator(entries, AUDIT_PAGE).get_page(request.GET.get("page"))
    return render(request, "security/audit.html", {"team": team_obj, "page": page})
