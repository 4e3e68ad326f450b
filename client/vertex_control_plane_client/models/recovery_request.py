from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.recovery_strategy_enum import RecoveryStrategyEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="RecoveryRequest")


@_attrs_define
class RecoveryRequest:
    """What happens after a preemption or stockout Vertex's own retries did not absorb.

    Attributes:
        strategy (RecoveryStrategyEnum | Unset): * `eager_next_region` - eager_next_region
            * `failover` - failover
            * `none` - none
        max_recoveries (int | Unset): All recoveries together (3).
        retries_in_place (int | Unset): After a preemption, attempts where the job was before moving on (2).
        tries_per_step (int | Unset): After a stockout, tries on one scheduling strategy in one region (the first
            included) before the next step (1); the last step keeps trying until max_recoveries.
        tries_per_region (int | Unset): Tries in one region, all its steps together, before the next region (0: no limit
            but the steps').
        backoff_s (float | Unset): The first wait before a try, in seconds (the site's, 10); doubles, jittered, with
            each try at one step.
        backoff_cap_s (float | Unset): The longest wait, in seconds (the site's, 300); at least backoff_s.
        fallback (list[str] | Unset): Scheduling strategies to move to, in order: SPOT, FLEX_START, STANDARD, e.g.
            ["FLEX_START", "STANDARD"].
        regions (list[str] | Unset): Other regions to fail over to, in order; checkpoints must be in a multi-region or
            dual-region bucket.
    """

    strategy: RecoveryStrategyEnum | Unset = UNSET
    max_recoveries: int | Unset = UNSET
    retries_in_place: int | Unset = UNSET
    tries_per_step: int | Unset = UNSET
    tries_per_region: int | Unset = UNSET
    backoff_s: float | Unset = UNSET
    backoff_cap_s: float | Unset = UNSET
    fallback: list[str] | Unset = UNSET
    regions: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        strategy: str | Unset = UNSET
        if not isinstance(self.strategy, Unset):
            strategy = self.strategy.value

        max_recoveries = self.max_recoveries

        retries_in_place = self.retries_in_place

        tries_per_step = self.tries_per_step

        tries_per_region = self.tries_per_region

        backoff_s = self.backoff_s

        backoff_cap_s = self.backoff_cap_s

        fallback: list[str] | Unset = UNSET
        if not isinstance(self.fallback, Unset):
            fallback = self.fallback

        regions: list[str] | Unset = UNSET
        if not isinstance(self.regions, Unset):
            regions = self.regions

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if strategy is not UNSET:
            field_dict["strategy"] = strategy
        if max_recoveries is not UNSET:
            field_dict["max_recoveries"] = max_recoveries
        if retries_in_place is not UNSET:
            field_dict["retries_in_place"] = retries_in_place
        if tries_per_step is not UNSET:
            field_dict["tries_per_step"] = tries_per_step
        if tries_per_region is not UNSET:
            field_dict["tries_per_region"] = tries_per_region
        if backoff_s is not UNSET:
            field_dict["backoff_s"] = backoff_s
        if backoff_cap_s is not UNSET:
            field_dict["backoff_cap_s"] = backoff_cap_s
        if fallback is not UNSET:
            field_dict["fallback"] = fallback
        if regions is not UNSET:
            field_dict["regions"] = regions

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _strategy = d.pop("strategy", UNSET)
        strategy: RecoveryStrategyEnum | Unset
        if isinstance(_strategy, Unset):
            strategy = UNSET
        else:
            strategy = RecoveryStrategyEnum(_strategy)

        max_recoveries = d.pop("max_recoveries", UNSET)

        retries_in_place = d.pop("retries_in_place", UNSET)

        tries_per_step = d.pop("tries_per_step", UNSET)

        tries_per_region = d.pop("tries_per_region", UNSET)

        backoff_s = d.pop("backoff_s", UNSET)

        backoff_cap_s = d.pop("backoff_cap_s", UNSET)

        fallback = cast(list[str], d.pop("fallback", UNSET))

        regions = cast(list[str], d.pop("regions", UNSET))

        recovery_request = cls(
            strategy=strategy,
            max_recoveries=max_recoveries,
            retries_in_place=retries_in_place,
            tries_per_step=tries_per_step,
            tries_per_region=tries_per_region,
            backoff_s=backoff_s,
            backoff_cap_s=backoff_cap_s,
            fallback=fallback,
            regions=regions,
        )

        return recovery_request
