"""Accelerators held on Vertex besides jobs' (a persistent resource's replicas), as the queue
in front of Vertex counts them: against their team's quota and share and the project's
quota, as a job that is never stopped for another team. The apps above runs register what
they hold (controlplane/clusters/apps.py), as they register their spend with costs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from vertexplan import fairshare
from vertexplan.quota import Need


@dataclass(frozen=True)
class Held:
    key: str                 # unique among every holder's: "cluster-12"
    team: str                # the team's slug
    demand: dict[fairshare.Flavor, int]
    since: datetime          # from when it holds them
    until: datetime | None   # when it let them go; None: it holds them now


_holders: dict[str, Callable[[datetime], list[Held]]] = {}


def register(name: str, held_since: Callable[[datetime], list[Held]]) -> None:
    """`held_since(t)`: what the app holds now or held at any time since t."""
    _holders[name] = held_since


def held_since(since: datetime) -> list[Held]:
    return [held for name in sorted(_holders) for held in _holders[name](since)]


def demand(needs: list[Need], region: str) -> dict[fairshare.Flavor, int]:
    """Accelerators needed at once (vertexplan.quota's, of a job or a resource) per flavor:
    type, region, spot or not."""
    out: dict[fairshare.Flavor, int] = {}
    for need in needs:
        flavor = fairshare.Flavor(need.accelerator, region, need.preemptible)
        out[flavor] = out.get(flavor, 0) + need.count
    return out
