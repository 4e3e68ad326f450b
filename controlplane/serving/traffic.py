"""Endpoint traffic splits (percent per deployed model id, summing to 100), as pure functions.

Vertex overwrites an endpoint's split with the one a DeployModel or UndeployModel carries, and
refuses to undeploy a model that still gets traffic; so the split is computed here from the
current one: a new model takes its share and the others keep their proportions of the rest.
"""

from __future__ import annotations

NEW = "0"  # how DeployModelRequest.traffic_split names the model being deployed


def _shares(weights: dict[str, int], total: int) -> dict[str, int]:
    """`total` percent split in proportion to `weights` (largest remainder, so the parts sum to
    exactly `total`); equal parts when every weight is 0."""
    if not weights or total <= 0:
        return dict.fromkeys(weights, 0)
    if sum(weights.values()) == 0:
        weights = dict.fromkeys(weights, 1)
    whole = sum(weights.values())
    exact = {k: total * w / whole for k, w in weights.items()}
    parts = {k: int(v) for k, v in exact.items()}
    left = total - sum(parts.values())
    for key in sorted(exact, key=lambda k: (parts[k] - exact[k], k))[:left]:
        parts[key] += 1
    return parts


def with_new_model(current: dict[str, int], percent: int) -> dict[str, int]:
    """The split sent with DeployModel: the new model ("0") gets `percent`."""
    current = {k: v for k, v in current.items() if k != NEW}
    if not current or percent >= 100:
        return {NEW: 100}
    return {NEW: percent, **_shares(current, 100 - percent)}


def without_model(current: dict[str, int], deployed_model_id: str,
                  remaining: list[str]) -> dict[str, int]:
    """The split sent with UndeployModel: the leaving model's share goes to the models that
    remain, in proportion to theirs. Empty when none remains."""
    if not remaining:
        return {}
    weights = {k: current.get(k, 0) for k in remaining if k != deployed_model_id}
    return _shares(weights, 100)
