"""Creating a sweep: one path for the API, the request page and the compose app's sweep form.

A request is composed and checked (lifecycle.check: the study, the counts, the trial job with
every composer rule and the team's policy), then recorded for submission. A refused request
records nothing and says why, keyed by request field path ("parameters[1].max_value").
"""

from __future__ import annotations

from typing import Any

from controlplane.sweeps import lifecycle
from controlplane.sweeps.models import Sweep
from controlplane.teams.models import Team


class SweepRefused(ValueError):
    """A sweep request that cannot be created; ``errors`` is keyed by request field path."""

    def __init__(self, errors: dict[str, list[str]]) -> None:
        super().__init__("; ".join(f"{k}: {m}" for k, ms in errors.items() for m in ms))
        self.errors = errors


def create_sweep(*, team: Team, user: Any, request: dict[str, Any],
                 checked: lifecycle.Checked | None = None) -> Sweep:
    """Check REQUEST for TEAM (unless CHECKED is its check already) and record the sweep.

    Raises SweepRefused (nothing is recorded) when it is not valid."""
    checked = checked if checked is not None else lifecycle.check(request, team)
    if not checked.ok:
        raise SweepRefused(checked.errors)
    return lifecycle.record(team=team, user=user, request=request, checked=checked)
