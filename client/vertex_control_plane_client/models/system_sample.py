from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SystemSample")


@_attrs_define
class SystemSample:
    """
    Attributes:
        at (datetime.datetime | None):
        cpu_percent (float | None): share of the machine's cores in use (100 = all of them)
        memory_percent (float | None): share of the machine's memory in use
        memory_gb (float | None): memory in use, GB (10^9)
        accelerator_percent (float | None): accelerator utilisation (null: the replica has none)
        accelerator_memory_percent (float | None):
    """

    at: datetime.datetime | None
    cpu_percent: float | None
    memory_percent: float | None
    memory_gb: float | None
    accelerator_percent: float | None
    accelerator_memory_percent: float | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at: None | str
        if isinstance(self.at, datetime.datetime):
            at = self.at.isoformat()
        else:
            at = self.at

        cpu_percent: float | None
        cpu_percent = self.cpu_percent

        memory_percent: float | None
        memory_percent = self.memory_percent

        memory_gb: float | None
        memory_gb = self.memory_gb

        accelerator_percent: float | None
        accelerator_percent = self.accelerator_percent

        accelerator_memory_percent: float | None
        accelerator_memory_percent = self.accelerator_memory_percent

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "cpu_percent": cpu_percent,
                "memory_percent": memory_percent,
                "memory_gb": memory_gb,
                "accelerator_percent": accelerator_percent,
                "accelerator_memory_percent": accelerator_memory_percent,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)

        def _parse_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                at_type_0 = datetime.datetime.fromisoformat(data)

                return at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        at = _parse_at(d.pop("at"))

        def _parse_cpu_percent(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        cpu_percent = _parse_cpu_percent(d.pop("cpu_percent"))

        def _parse_memory_percent(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        memory_percent = _parse_memory_percent(d.pop("memory_percent"))

        def _parse_memory_gb(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        memory_gb = _parse_memory_gb(d.pop("memory_gb"))

        def _parse_accelerator_percent(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        accelerator_percent = _parse_accelerator_percent(d.pop("accelerator_percent"))

        def _parse_accelerator_memory_percent(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        accelerator_memory_percent = _parse_accelerator_memory_percent(d.pop("accelerator_memory_percent"))

        system_sample = cls(
            at=at,
            cpu_percent=cpu_percent,
            memory_percent=memory_percent,
            memory_gb=memory_gb,
            accelerator_percent=accelerator_percent,
            accelerator_memory_percent=accelerator_memory_percent,
        )

        system_sample.additional_properties = d
        return system_sample

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
