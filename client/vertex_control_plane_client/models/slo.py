from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.status_enum import StatusEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="Slo")


@_attrs_define
class Slo:
    """
    Attributes:
        p95_ms (float):
        status (StatusEnum): * `OK` - Ok
            * `BREACHED` - Breached
        status_changed_at (datetime.datetime):
        last_evaluated_at (datetime.datetime | None):
        last_p95_ms (float | None):
        last_error_rate (float | None):
        last_samples (int):
        error_rate (float | Unset):
        window_s (int | Unset):
        min_samples (int | Unset):
        enabled (bool | Unset):
    """

    p95_ms: float
    status: StatusEnum
    status_changed_at: datetime.datetime
    last_evaluated_at: datetime.datetime | None
    last_p95_ms: float | None
    last_error_rate: float | None
    last_samples: int
    error_rate: float | Unset = UNSET
    window_s: int | Unset = UNSET
    min_samples: int | Unset = UNSET
    enabled: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        p95_ms = self.p95_ms

        status = self.status.value

        status_changed_at = self.status_changed_at.isoformat()

        last_evaluated_at: None | str
        if isinstance(self.last_evaluated_at, datetime.datetime):
            last_evaluated_at = self.last_evaluated_at.isoformat()
        else:
            last_evaluated_at = self.last_evaluated_at

        last_p95_ms: float | None
        last_p95_ms = self.last_p95_ms

        last_error_rate: float | None
        last_error_rate = self.last_error_rate

        last_samples = self.last_samples

        error_rate = self.error_rate

        window_s = self.window_s

        min_samples = self.min_samples

        enabled = self.enabled

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "p95_ms": p95_ms,
                "status": status,
                "status_changed_at": status_changed_at,
                "last_evaluated_at": last_evaluated_at,
                "last_p95_ms": last_p95_ms,
                "last_error_rate": last_error_rate,
                "last_samples": last_samples,
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

        status = StatusEnum(d.pop("status"))

        status_changed_at = datetime.datetime.fromisoformat(d.pop("status_changed_at"))

        def _parse_last_evaluated_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_evaluated_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_evaluated_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_evaluated_at = _parse_last_evaluated_at(d.pop("last_evaluated_at"))

        def _parse_last_p95_ms(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        last_p95_ms = _parse_last_p95_ms(d.pop("last_p95_ms"))

        def _parse_last_error_rate(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        last_error_rate = _parse_last_error_rate(d.pop("last_error_rate"))

        last_samples = d.pop("last_samples")

        error_rate = d.pop("error_rate", UNSET)

        window_s = d.pop("window_s", UNSET)

        min_samples = d.pop("min_samples", UNSET)

        enabled = d.pop("enabled", UNSET)

        slo = cls(
            p95_ms=p95_ms,
            status=status,
            status_changed_at=status_changed_at,
            last_evaluated_at=last_evaluated_at,
            last_p95_ms=last_p95_ms,
            last_error_rate=last_error_rate,
            last_samples=last_samples,
            error_rate=error_rate,
            window_s=window_s,
            min_samples=min_samples,
            enabled=enabled,
        )

        slo.additional_properties = d
        return slo

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
