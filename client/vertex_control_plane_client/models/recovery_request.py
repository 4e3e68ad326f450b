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
        max_recoveries (int | Unset):
        retries_in_place (int | Unset): After a preemption, attempts where the job was before moving on (2).
        fallback (list[str] | Unset): Scheduling strategies to move to, in order: SPOT, FLEX_START, STANDARD, e.g.
            ["FLEX_START", "STANDARD"].
        regions (list[str] | Unset): Other regions to fail over to, in order; checkpoints must be in a multi-region or
            dual-region bucket.
    """

    strategy: RecoveryStrategyEnum | Unset = UNSET
    max_recoveries: int | Unset = UNSET
    retries_in_place: int | Unset = UNSET
    fallback: list[str] | Unset = UNSET
    regions: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        strategy: str | Unset = UNSET
        if not isinstance(self.strategy, Unset):
            strategy = self.strategy.value

        max_recoveries = self.max_recoveries

        retries_in_place = self.retries_in_place

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

        fallback = cast(list[str], d.pop("fallback", UNSET))

        regions = cast(list[str], d.pop("regions", UNSET))

        recovery_request = cls(
            strategy=strategy,
            max_recoveries=max_recoveries,
            retries_in_place=retries_in_place,
            fallback=fallback,
            regions=regions,
        )

        return recovery_request
