from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.sharding_enum import ShardingEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="TpuRequest")


@_attrs_define
class TpuRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        sharding (ShardingEnum | Unset): * `replicated` - replicated
            * `fsdp` - fsdp
    """

    sharding: ShardingEnum | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        sharding: str | Unset = UNSET
        if not isinstance(self.sharding, Unset):
            sharding = self.sharding.value

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if sharding is not UNSET:
            field_dict["sharding"] = sharding

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _sharding = d.pop("sharding", UNSET)
        sharding: ShardingEnum | Unset
        if isinstance(_sharding, Unset):
            sharding = UNSET
        else:
            sharding = ShardingEnum(_sharding)

        tpu_request = cls(
            sharding=sharding,
        )

        return tpu_request
