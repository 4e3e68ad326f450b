from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="IdleResource")


@_attrs_define
class IdleResource:
    """
    Attributes:
        name (str): the persistent resource (a Ray cluster)
        accelerators (int): its accelerators (machines if none)
        idle_seconds (float): wall seconds in the month it was up with nothing running on it
        accelerator_seconds (float):
        cost_usd (float):
        cost_micros (int):
    """

    name: str
    accelerators: int
    idle_seconds: float
    accelerator_seconds: float
    cost_usd: float
    cost_micros: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        accelerators = self.accelerators

        idle_seconds = self.idle_seconds

        accelerator_seconds = self.accelerator_seconds

        cost_usd = self.cost_usd

        cost_micros = self.cost_micros

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "accelerators": accelerators,
                "idle_seconds": idle_seconds,
                "accelerator_seconds": accelerator_seconds,
                "cost_usd": cost_usd,
                "cost_micros": cost_micros,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        accelerators = d.pop("accelerators")

        idle_seconds = d.pop("idle_seconds")

        accelerator_seconds = d.pop("accelerator_seconds")

        cost_usd = d.pop("cost_usd")

        cost_micros = d.pop("cost_micros")

        idle_resource = cls(
            name=name,
            accelerators=accelerators,
            idle_seconds=idle_seconds,
            accelerator_seconds=accelerator_seconds,
            cost_usd=cost_usd,
            cost_micros=cost_micros,
        )

        idle_resource.additional_properties = d
        return idle_resource

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
