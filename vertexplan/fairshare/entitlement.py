"""What each team is entitled to of a flavor at one moment, given what it asks for. Pure.

The standard, demand-aware definition (weighted max-min fairness, as Kueue's fair sharing and
DRF's evaluation use it): the capacity is filled like water, by guarantee weight; a team that
asks for less than its weighted part is entitled to what it asks, and what it leaves is
split among the others by weight, again up to what each asks. A team's guarantee over the
guarantees' sum is its entitlement only while every team asks for more than that: a team
with nothing queued of a flavor is entitled to none of it, and the others to its part.
"""

from __future__ import annotations

from collections.abc import Mapping

# Below this an allocation is settled (floats, accelerators).
_EPSILON = 1e-9


def water_fill(capacity: float, demands: Mapping[str, float], weights: Mapping[str, float],
               ceilings: Mapping[str, float] | None = None) -> dict[str, float]:
    """Each team's max-min fair part of `capacity` by `weights`, none over its demand (nor
    its ceiling: guarantee + borrowing limit). A team of weight 0 shares only what the
    weighted teams leave, equally with the others of weight 0."""
    asked = {team: max(0.0, min(need, (ceilings or {}).get(team, float("inf"))))
             for team, need in demands.items()}
    given = {team: 0.0 for team in demands}
    left = float(capacity)
    for tier in (lambda t: weights.get(t, 0) > 0, lambda t: weights.get(t, 0) <= 0):
        active = {t for t in asked if tier(t) and asked[t] > _EPSILON}
        while active and left > _EPSILON:
            weight = {t: (weights.get(t, 0) if weights.get(t, 0) > 0 else 1.0) for t in active}
            level = left / sum(weight.values())
            # Teams asking no more than their part at this level get what they ask; the
            # level then rises for the others with what they left.
            sated = {t for t in active if asked[t] - given[t] <= level * weight[t] + _EPSILON}
            if not sated:
                for team in active:
                    given[team] += level * weight[team]
                left = 0.0
                break
            for team in sated:
                left -= asked[team] - given[team]
                given[team] = asked[team]
            active -= sated
    return given
