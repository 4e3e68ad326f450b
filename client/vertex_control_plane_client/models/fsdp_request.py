from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.mode_enum import ModeEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="FsdpRequest")


@_attrs_define
class FsdpRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        mode (ModeEnum | Unset): * `full_shard` - full_shard
            * `shard_grad_op` - shard_grad_op
            * `hybrid_shard` - hybrid_shard
        shard_size (int | Unset):
    """

    mode: ModeEnum | Unset = UNSET
    shard_size: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode.value

        shard_size = self.shard_size

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if mode is not UNSET:
            field_dict["mode"] = mode
        if shard_size is not UNSET:
            field_dict["shard_size"] = shard_size

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        _mode = d.pop("mode", UNSET)
        mode: ModeEnum | Unset
        if isinstance(_mode, Unset):
            mode = UNSET
        else:
            mode = ModeEnum(_mode)

        shard_size = d.pop("shard_size", UNSET)

        fsdp_request = cls(
            mode=mode,
            shard_size=shard_size,
        )

        return fsdp_request
