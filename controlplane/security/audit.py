"""The audit log: who submitted, cancelled, resubmitted or tagged which job, and who changed a
team's members, channels, templates, budgets or their own tokens.

Views call `record(request, action, target)` after the change succeeded; a read (GET, HEAD,
OPTIONS) changes nothing and writes nothing (a read-only token must not fill the log). The
state change itself stays where it is (controlplane/runs/lifecycle.py for jobs); this only
writes down who asked.
"""

from __future__ import annotations

from typing import Any

from django.db import models

from controlplane.security.models import ApiToken, AuditEntry

ACTIONS = (
    # job.clone: written by reads of a job's request until issue 40; kept for those entries.
    "job.submit", "job.cancel", "job.clone", "job.resubmit", "job.tag",
    "template.save", "template.delete",
    "channel.create", "channel.update", "channel.delete",
    "budget.create", "budget.update", "budget.delete",
    "token.create", "token.revoke",
    "member.add", "member.change", "member.remove",
    "policy.update", "tracking.update",
    "sweep.submit", "sweep.cancel",
    "cluster.delete_idle",
    "quota.update",
)
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
# Who an entry names when the product acted on a team's standing rule, not on a request.
BY_POLICY = "team policy"


def via(request: Any) -> str:
    """How the request came in: a named API token, the API with a session, or a page."""
    auth = getattr(request, "auth", None)
    if isinstance(auth, ApiToken):
        return f"token {auth.prefix}"
    if hasattr(request, "accepted_renderer") or request.path.startswith("/api/"):
        return "api"
    return "web"


def record(request: Any, action: str, target: models.Model | None = None, *,
           team: Any = None, detail: dict[str, Any] | None = None) -> AuditEntry:
    """Write one entry. The team defaults to the target's own team."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    if request.method in SAFE_METHODS:
        raise ValueError(f"{action}: a {request.method} request changes nothing, so it "
                         "writes no audit entry")
    user = request.user
    if team is None and target is not None:
        team = getattr(target, "team", None)
    return AuditEntry.objects.create(
        actor=user if user.is_authenticated else None,
        actor_name=user.get_username() if user.is_authenticated else "",
        team=team,
        action=action,
        target_type=target._meta.model_name if target is not None else "",
        target_id=str(target.pk) if target is not None else "",
        target_name=str(getattr(target, "name", ""))[:200] if target is not None else "",
        via=via(request),
        detail=detail or {},
    )


def record_by_policy(action: str, target: models.Model, *, detail: dict[str, Any]) -> AuditEntry:
    """Write one entry for what a periodic task did under the target's team's policy (no one
    asked at that moment: the actor is the policy, set by the team's admins)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown audit action {action!r}")
    return AuditEntry.objects.create(
        actor=None, actor_name=BY_POLICY, team=getattr(target, "team", None), action=action,
        target_type=target._meta.model_name, target_id=str(target.pk),
        target_name=str(getattr(target, "name", ""))[:200], via="policy", detail=detail)
