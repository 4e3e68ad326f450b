"""A team's policy: where its jobs write and which shared resources they may use.

Output prefixes never overlap between teams (no team's prefix lies inside another's, nor
inside another team's default folder, nor the default folder of a team not created yet, nor a
prefix another team moved away from, which stays reserved for its old jobs' outputs), a
service account serves one team only (so one team's jobs cannot act, or write log entries, as
another's), and the lists hold names as Vertex spells them. The composer's validation applies
the policy to every job (controlplane/teams/job_policy.py: compose and sweeps both use it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from controlplane.teams.models import Team, TeamPolicy

_EMAIL = re.compile(r"[a-z0-9][a-z0-9._+-]{0,99}@[a-z0-9][a-z0-9.-]{0,200}\.[a-z]{2,20}")
_NETWORK = re.compile(r"projects/[a-z0-9-]{1,64}/global/networks/[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
_RESERVATION = re.compile(
    r"ANY_RESERVATION|projects/[a-z0-9-]{1,64}/zones/[a-z0-9-]{1,64}/reservations/"
    r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
# In a team's reservations: ANY_RESERVATION is allowed (every reservation of the project is
# the team's to consume).
ANY_RESERVATION = "ANY_RESERVATION"
_BUCKET = re.compile(r"[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]")
_SEGMENT = re.compile(r"[A-Za-z0-9._=@+-]{1,200}")
MAX_ITEMS = 50
# Idle clusters are deleted after this many minutes (0: never). Not sooner than the sweep can
# tell a pause between two jobs from idleness, nor later than a week (beyond that, the idle
# flag has long said so and nobody would wait that long on purpose).
IDLE_DELETE_MIN, IDLE_DELETE_MAX = 10, 7 * 24 * 60
# Hang detection: k times the p95 step interval, and the floor in seconds (a minute: the log
# follower's lag must never look like a hang; a day: NCCL's own watchdog has long fired).
# A queue wait worth telling (minutes): from a quarter of an hour to a week.
QUEUE_ALERT_MIN, QUEUE_ALERT_MAX = 15, 7 * 24 * 60
HANG_K_MIN, HANG_K_MAX = 2, 100
HANG_FLOOR_MIN_S, HANG_FLOOR_MAX_S = 60, 24 * 3600


@dataclass(frozen=True)
class Effective:
    """The policy as validation applies it (defaults filled in)."""

    output_prefix: str  # gs://bucket/key, no trailing slash
    service_accounts: frozenset[str] = field(default_factory=frozenset)
    networks: frozenset[str] = field(default_factory=frozenset)
    reservations: frozenset[str] = field(default_factory=frozenset)
    allow_web_access: bool = False
    delete_idle_clusters_after_min: int = 0
    hang_k: int = 10
    hang_floor_s: int = 300
    restart_on_hang: bool = False
    queue_wait_alert_min: int = 0


class PolicyError(ValueError):
    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__(str(errors))
        self.errors = errors


def default_prefix(team: Team) -> str:
    return output_prefix(team.slug, None)


def output_prefix(slug: str, stored: str | None) -> str:
    """effective().output_prefix from the team's slug and its policy row's output_prefix
    already read (None: the team has no policy row), for a reader that fetched them with the
    team's jobs in one query."""
    default = f"{settings.CP_OUTPUT_URI}/{slug}"
    return default if stored is None else (stored or default).rstrip("/")


def effective(team: Team) -> Effective:
    row = TeamPolicy.objects.filter(team=team).first()
    if row is None:
        return Effective(output_prefix=default_prefix(team))
    return Effective(
        output_prefix=output_prefix(team.slug, row.output_prefix),
        service_accounts=frozenset(row.service_accounts or ()),
        networks=frozenset(row.networks or ()),
        reservations=frozenset(row.reservations or ()),
        allow_web_access=row.allow_web_access,
        delete_idle_clusters_after_min=row.delete_idle_clusters_after_min,
        hang_k=row.hang_k, hang_floor_s=row.hang_floor_s, restart_on_hang=row.restart_on_hang,
        queue_wait_alert_min=row.queue_wait_alert_min,
    )


def segments(uri: Any) -> list[str] | None:
    """[bucket, key segments...] of a gs:// URI, or None when it is not one or has '.', '..',
    empty or odd segments (which could name something else than they seem)."""
    if not isinstance(uri, str) or not uri.startswith("gs://"):
        return None
    parts = uri[len("gs://"):].rstrip("/").split("/")
    if not parts or not _BUCKET.fullmatch(parts[0]):
        return None
    if any(p in (".", "..") or not _SEGMENT.fullmatch(p) for p in parts[1:]):
        return None
    return parts


def inside(uri: Any, prefix: str) -> bool:
    inner, outer = segments(uri), segments(prefix)
    return inner is not None and outer is not None and inner[:len(outer)] == outer


def _overlaps(a: list[str], b: list[str]) -> bool:
    shorter = min(len(a), len(b))
    return a[:shorter] == b[:shorter]


def _claimed_elsewhere(team: Team, mine: list[str]) -> str | None:
    """Why ``mine`` is not the team's to claim, or None. Every team's default folder lies
    under CP_OUTPUT_URI, those of teams created later too, so there a team may claim only
    inside its own; elsewhere nothing another team writes under now, by default or wrote
    under before."""
    root = segments(settings.CP_OUTPUT_URI)
    own_default = segments(default_prefix(team)) or []
    if root and _overlaps(mine, root) and mine[:len(own_default)] != own_default:
        return (f"lies where each team's default folder is ({settings.CP_OUTPUT_URI}/<team>/, "
                "for teams that exist and those created later): choose a folder inside "
                f"your own ({default_prefix(team)}/) or outside {settings.CP_OUTPUT_URI}/")
    rows = {row.team_id: row for row in TeamPolicy.objects.exclude(team=team)}
    for other in Team.objects.exclude(pk=team.pk).only("pk", "slug"):
        row = rows.get(other.pk)
        theirs = [default_prefix(other)]
        if row is not None:
            theirs += [output_prefix(other.slug, row.output_prefix),
                       *(row.released_prefixes or ())]
        if any(_overlaps(mine, s) for s in map(segments, theirs) if s):
            return ("overlaps the output prefix of another team (one its jobs write under, "
                    "its default folder, or one it used before, kept for its jobs' outputs): "
                    "choose a folder that is neither inside theirs nor contains it")
    return None


def _release(row: TeamPolicy, new: str) -> None:
    """Set the row's prefix; the one it leaves is kept reserved for the team."""
    old = row.output_prefix
    if old and old != new and old not in (row.released_prefixes or []):
        row.released_prefixes = [*(row.released_prefixes or []), old]
    row.output_prefix = new


def _list(data: dict[str, Any], name: str, pattern: re.Pattern[str], example: str,
          errors: dict[str, list[str]]) -> list[str]:
    value = data.get(name, [])
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        errors[name] = [f"a list of at most {MAX_ITEMS} names, e.g. [{example!r}]"]
        return []
    bad = [v for v in value if not isinstance(v, str) or not pattern.fullmatch(v)]
    if bad:
        errors[name] = [f"{str(b)[:100]!r} is not valid; write names such as {example!r}"
                        for b in bad[:5]]
    return sorted({v for v in value if isinstance(v, str)})


def update(team: Team, data: dict[str, Any]) -> TeamPolicy:
    """Check and store a team's policy (the fields given replace the stored ones)."""
    errors: dict[str, list[str]] = {}
    row = TeamPolicy.objects.filter(team=team).first() or TeamPolicy(team=team)
    known = {"output_prefix", "service_accounts", "networks", "reservations",
             "allow_web_access", "delete_idle_clusters_after_min", "queue_wait_alert_min",
             *HANG_FIELDS}
    for name in sorted(set(data) - known):
        errors[name] = [f"unknown field; valid: {', '.join(sorted(known))}"]
    if "output_prefix" in data:
        prefix = data["output_prefix"]
        if not isinstance(prefix, str):
            errors["output_prefix"] = ["a gs://bucket/folder URI, or empty for the default"]
        elif prefix.strip():
            mine = segments(prefix.strip())
            if mine is None or len(mine) < 2:
                errors["output_prefix"] = [
                    "a gs://bucket/folder URI with a folder, without '.' or '..' segments "
                    f"(default: {default_prefix(team)}/)"]
            else:
                claimed = _claimed_elsewhere(team, mine)
                if claimed:
                    errors["output_prefix"] = [claimed]
                _release(row, "gs://" + "/".join(mine))
        else:
            _release(row, "")
    if "service_accounts" in data:
        accounts = _list(data, "service_accounts", _EMAIL,
                         "trainer-vision@my-project.iam.gserviceaccount.com", errors)
        taken = {a for p in TeamPolicy.objects.exclude(team=team)
                 for a in (p.service_accounts or ()) if a in accounts}
        if taken:
            errors.setdefault("service_accounts", []).append(
                f"already a service account of another team: {', '.join(sorted(taken))}; "
                "one account serves one team, so its jobs cannot act as another's")
        row.service_accounts = accounts
    if "networks" in data:
        row.networks = _list(data, "networks", _NETWORK,
                             "projects/123456789/global/networks/vision-vpc", errors)
    if "reservations" in data:
        row.reservations = _list(data, "reservations", _RESERVATION,
                                 "projects/my-project/zones/us-central1-a/reservations/a100s",
                                 errors)
    if "allow_web_access" in data:
        if not isinstance(data["allow_web_access"], bool):
            errors["allow_web_access"] = ["true or false"]
        else:
            row.allow_web_access = data["allow_web_access"]
    for name, (low, high) in MINUTES_OR_NEVER.items():
        _minutes_or_never(row, data, errors, name, low, high)
    _hang_rule(row, data, errors)
    if errors:
        raise PolicyError(errors)
    row.updated_at = timezone.now()
    with transaction.atomic():
        row.save()
    return row


HANG_FIELDS = ("hang_k", "hang_floor_s", "restart_on_hang")
# Fields of whole minutes, 0 meaning never: their bounds otherwise.
MINUTES_OR_NEVER = {"delete_idle_clusters_after_min": (IDLE_DELETE_MIN, IDLE_DELETE_MAX),
                    "queue_wait_alert_min": (QUEUE_ALERT_MIN, QUEUE_ALERT_MAX)}


def _minutes_or_never(row: TeamPolicy, data: dict[str, Any], errors: dict[str, list[str]],
                      name: str, low: int, high: int) -> None:
    if name not in data:
        return
    minutes = data[name]
    if isinstance(minutes, bool) or not isinstance(minutes, int) or not (
            minutes == 0 or low <= minutes <= high):
        errors[name] = [f"{repr(minutes)[:40]}: 0 (never) or whole minutes from {low} "
                        f"to {high:,} (a week)"]
    else:
        setattr(row, name, minutes)


def _hang_rule(row: TeamPolicy, data: dict[str, Any], errors: dict[str, list[str]]) -> None:
    """The hang rule's fields of a policy update, each checked on its own."""
    bounds = {"hang_k": (HANG_K_MIN, HANG_K_MAX, "times the p95 step interval"),
              "hang_floor_s": (HANG_FLOOR_MIN_S, HANG_FLOOR_MAX_S, "seconds")}
    for name, (low, high, unit) in bounds.items():
        if name not in data:
            continue
        value = data[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            errors[name] = [f"{repr(value)[:40]}: a whole number from {low} to {high:,} ({unit})"]
        else:
            setattr(row, name, value)
    if "restart_on_hang" in data:
        if not isinstance(data["restart_on_hang"], bool):
            errors["restart_on_hang"] = ["true or false"]
        else:
            row.restart_on_hang = data["restart_on_hang"]


def describe(team: Team) -> dict[str, Any]:
    policy = effective(team)
    return {
        "output_prefix": policy.output_prefix + "/",
        "service_accounts": sorted(policy.service_accounts),
        "networks": sorted(policy.networks),
        "reservations": sorted(policy.reservations),
        "allow_web_access": policy.allow_web_access,
        "delete_idle_clusters_after_min": policy.delete_idle_clusters_after_min,
        "hang_k": policy.hang_k,
        "hang_floor_s": policy.hang_floor_s,
        "restart_on_hang": policy.restart_on_hang,
        "queue_wait_alert_min": policy.queue_wait_alert_min,
    }
