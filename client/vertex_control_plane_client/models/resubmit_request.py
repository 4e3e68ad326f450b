from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ResubmitRequest")


@_attrs_define
class ResubmitRequest:
    """
    Attributes:
        checkpoint_step (int | Unset): Default: the newest checkpoint.
        name (str | Unset):
    """

    checkpoint_step: int | Unset = UNSET
    name: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        checkpoint_step = self.checkpoint_step

        name = self.name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if checkpoint_step is not UNSET:
            field_dict["checkpoint_step"] = checkpoint_step
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        checkpoint_step = d.pop("checkpoint_step", UNSET)

        name = d.pop("name", UNSET)

        resubmit_request = cls(
            checkpoint_step=checkpoint_step,
            name=name,
        )

        resubmit_request.additional_properties = d
        return resubmit_request

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
