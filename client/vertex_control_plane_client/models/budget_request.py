from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.on_exceed_enum import OnExceedEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="BudgetRequest")


@_attrs_define
class BudgetRequest:
    """
    Attributes:
        monthly_budget_micros (int): Integer micro-dollars a month (1 USD = 1000000).
        on_exceed (OnExceedEnum | Unset): * `cancel` - Cancel the team's running jobs
            * `notify` - Only notify Default: OnExceedEnum.NOTIFY.
    """

    monthly_budget_micros: int
    on_exceed: OnExceedEnum | Unset = OnExceedEnum.NOTIFY
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        monthly_budget_micros = self.monthly_budget_micros

        on_exceed: str | Unset = UNSET
        if not isinstance(self.on_exceed, Unset):
            on_exceed = self.on_exceed.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "monthly_budget_micros": monthly_budget_micros,
            }
        )
        if on_exceed is not UNSET:
            field_dict["on_exceed"] = on_exceed

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        monthly_budget_micros = d.pop("monthly_budget_micros")

        _on_exceed = d.pop("on_exceed", UNSET)
        on_exceed: OnExceedEnum | Unset
        if isinstance(_on_exceed, Unset):
            on_exceed = UNSET
        else:
            on_exceed = OnExceedEnum(_on_exceed)

        budget_request = cls(
            monthly_budget_micros=monthly_budget_micros,
            on_exceed=on_exceed,
        )

        budget_request.additional_properties = d
        return budget_request

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
