from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="SloRequest")


@_attrs_define
class SloRequest:
    """
    Attributes:
        p95_ms (float):
        error_rate (float | Unset):
        window_s (int | Unset):
        min_samples (int | Unset):
        enabled (bool | Unset):
    """

    p95_ms: float
    error_rate: float | Unset = UNSET
    window_s: int | Unset = UNSET
    min_samples: int | Unset = UNSET
    enabled: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        p95_ms = self.p95_ms

        error_rate = self.error_rate

        window_s = self.window_s

        min_samples = self.min_samples

        enabled = self.enabled

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "p95_ms": p95_ms,
            }
        )
        if error_rate is not UNSET:
            field_dict["error_rate"] = error_rate
        if window_s is not UNSET:
            field_dict["window_s"] = window_s
        if min_samples is not UNSET:
            field_dict["min_samples"] = min_samples
        if enabled is not UNSET:
            field_dict["enabled"] = enabled

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        p95_ms = d.pop("p95_ms")

        error_rate = d.pop("error_rate", UNSET)

        window_s = d.pop("window_s", UNSET)

        min_samples = d.pop("min_samples", UNSET)

        enabled = d.pop("enabled", UNSET)

        slo_request = cls(
            p95_ms=p95_ms,
            error_rate=error_rate,
            window_s=window_s,
            min_samples=min_samples,
            enabled=enabled,
        )

        slo_request.additional_properties = d
        return slo_request

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
