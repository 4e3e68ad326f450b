from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Category")


@_attrs_define
class Category:
    """
    Attributes:
        name (str): one of productive, program_startup, compile, restore, data_wait, checkpoint_save, eval,
            replayed_steps, lost_progress, hang, program_shutdown, idle, other, queued, provisioning, preempted_unbilled
        accelerator_seconds (float):
        cost_usd (float | None): null when the job has no readable prices
        cost_micros (int | None):
        billed (bool): false: reported beside the bill (queued, provisioning, preemption gaps)
    """

    name: str
    accelerator_seconds: float
    cost_usd: float | None
    cost_micros: int | None
    billed: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        accelerator_seconds = self.accelerator_seconds

        cost_usd: float | None
        cost_usd = self.cost_usd

        cost_micros: int | None
        cost_micros = self.cost_micros

        billed = self.billed

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "name": name,
                "accelerator_seconds": accelerator_seconds,
                "cost_usd": cost_usd,
                "cost_micros": cost_micros,
                "billed": billed,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        accelerator_seconds = d.pop("accelerator_seconds")

        def _parse_cost_usd(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        cost_usd = _parse_cost_usd(d.pop("cost_usd"))

        def _parse_cost_micros(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        cost_micros = _parse_cost_micros(d.pop("cost_micros"))

        billed = d.pop("billed")

        category = cls(
            name=name,
            accelerator_seconds=accelerator_seconds,
            cost_usd=cost_usd,
            cost_micros=cost_micros,
            billed=billed,
        )

        category.additional_properties = d
        return category

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
