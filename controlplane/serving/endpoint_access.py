"""Who can reach an endpoint, checked before anything is sent: public (the shared prediction
domain), dedicated (a DNS name of its own) or private (Private Service Connect, reachable only
from the VPCs of the projects in its allowlist). Fixed when the endpoint is created."""

from __future__ import annotations

import re

PUBLIC, DEDICATED, PRIVATE = "public", "dedicated", "private"
ACCESS_KINDS = (PUBLIC, DEDICATED, PRIVATE)
# A Google Cloud project id (6-30 of a-z, 0-9 and -, starting with a letter, not ending with -)
# or a project number.
_PROJECT = re.compile(r"^(?:[a-z][a-z0-9-]{4,28}[a-z0-9]|[0-9]{1,20})$")
MAX_ALLOWLIST = 100


class AccessError(ValueError):
    """The access asked for is not valid; `field` is the request field at fault."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def check(access: str, allowlist: list[str]) -> list[str]:
    """The allowlist to store for ``access``; AccessError says which field is wrong and why."""
    if access not in ACCESS_KINDS:
        raise AccessError(f"unknown access {access!r}: one of {', '.join(ACCESS_KINDS)}",
                          "access")
    if access != PRIVATE:
        if allowlist:
            raise AccessError("only a private endpoint has a project allowlist (set access "
                              "to private, or leave the allowlist empty)",
                              "psc_project_allowlist")
        return []
    if not allowlist:
        raise AccessError("a private endpoint needs the projects allowed to connect to it "
                          "(their ids or numbers)", "psc_project_allowlist")
    if len(allowlist) > MAX_ALLOWLIST:
        raise AccessError(f"{len(allowlist)} projects: at most {MAX_ALLOWLIST}",
                          "psc_project_allowlist")
    seen: list[str] = []
    for position, project in enumerate(allowlist):
        if not isinstance(project, str) or not _PROJECT.match(project):
            shown = repr(project)[:70]
            raise AccessError(f"entry {position} ({shown}) is not a project id (6-30 of a-z, "
                              "0-9 and -, starting with a letter) or a project number",
                              "psc_project_allowlist")
        if project not in seen:
            seen.append(project)
    return seen
