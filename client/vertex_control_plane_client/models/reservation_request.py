from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.type_enum import TypeEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="ReservationRequest")


@_attrs_define
class ReservationRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        type_ (TypeEnum): * `NO_RESERVATION` - NO_RESERVATION
            * `ANY_RESERVATION` - ANY_RESERVATION
            * `SPECIFIC_RESERVATION` - SPECIFIC_RESERVATION
        key (str | Unset):
        values (list[str] | Unset):
    """

    type_: TypeEnum
    key: str | Unset = UNSET
    values: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        type_ = self.type_.value

        key = self.key

        values: list[str] | Unset = UNSET
        if not isinstance(self.values, Unset):
            values = self.values

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "type": type_,
            }
        )
        if key is not UNSET:
            field_dict["key"] = key
        if values is not UNSET:
            field_dict["values"] = values

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        type_ = TypeEnum(d.pop("type"))

        key = d.pop("key", UNSET)

        values = cast(list[str], d.pop("values", UNSET))

        reservation_request = cls(
            type_=type_,
            key=key,
            values=values,
        )

        return reservation_request
