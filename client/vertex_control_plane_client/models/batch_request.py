from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="BatchRequest")


@_attrs_define
class BatchRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        global_batch_size (int | Unset):
        micro_batch_size (int | Unset):
        gradient_accumulation_steps (int | Unset):
    """

    global_batch_size: int | Unset = UNSET
    micro_batch_size: int | Unset = UNSET
    gradient_accumulation_steps: int | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        global_batch_size = self.global_batch_size

        micro_batch_size = self.micro_batch_size

        gradient_accumulation_steps = self.gradient_accumulation_steps

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if global_batch_size is not UNSET:
            field_dict["global_batch_size"] = global_batch_size
        if micro_batch_size is not UNSET:
            field_dict["micro_batch_size"] = micro_batch_size
        if gradient_accumulation_steps is not UNSET:
            field_dict["gradient_accumulation_steps"] = gradient_accumulation_steps

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        global_batch_size = d.pop("global_batch_size", UNSET)

        micro_batch_size = d.pop("micro_batch_size", UNSET)

        gradient_accumulation_steps = d.pop("gradient_accumulation_steps", UNSET)

        batch_request = cls(
            global_batch_size=global_batch_size,
            micro_batch_size=micro_batch_size,
            gradient_accumulation_steps=gradient_accumulation_steps,
        )

        return batch_request
