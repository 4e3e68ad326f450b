"""One user on the machine per team: a team's replicas cannot read or signal another team's.

The control plane labels every CustomJob it creates with its team (`cp-team`, contract/
labels.py; a tuning job's trials carry the tuning job's labels). When the sandbox runs replicas
as a user of their own (sandbox.py, the emulator is root), a labelled job's replicas run as its
team's user instead of the shared one: another uid, so /proc/<pid>/environ, kill() and the
team's private folders are closed to every other team. A job without the label (a user's own
SDK script) runs as the sandbox's user, as before.

The user's name is derived, never the label itself: `lvt-` + the label's letters and digits
(at most 18, anything else a dash) + 8 hex digits of its SHA-256, 31 characters at most
(useradd's limit is 32), so two labels never share a user and no label reaches useradd's
argv (sandbox._ensure_user passes an argument list, never a shell) as it was written.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Mapping

from contract.labels import TEAM
from localvertex.replicas.sandbox import Identity, usable_user

USER_PREFIX = "lvt-"
_SLUG_CHARS = 18
_NOT_NAME = re.compile(r"[^a-z0-9]+")

_known: dict[str, Identity] = {}
# Made once per team per emulator (useradd, and its pass through the interpreter's folders).
_lock = threading.Lock()


def user_name(team: str) -> str:
    slug = _NOT_NAME.sub("-", team.lower()).strip("-")[:_SLUG_CHARS].strip("-") or "team"
    digest = hashlib.sha256(team.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{USER_PREFIX}{slug}-{digest}"


def team_of(labels: Mapping[str, str]) -> str:
    """The job's team, as the control plane labelled it ('' when it did not)."""
    return labels.get(TEAM, "")


def identity_for(default: Identity | None, team: str) -> Identity | None:
    """Who a job of TEAM runs as: its team's user where the sandbox runs replicas as a user of
    their own (DEFAULT, the sandbox's user, is not None) and the job names a team; DEFAULT
    otherwise. SandboxError when the team's user cannot be made (the job then fails saying
    so: it never falls back to a user another team shares)."""
    if default is None or not team:
        return default
    name = user_name(team)
    with _lock:
        found = _known.get(name)
        if found is None:
            found = _known[name] = usable_user(name)
    return found
