from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Sample")


@_attrs_define
class Sample:
    """
    Attributes:
        at (datetime.datetime):
        latency_ms (float):
        ok (bool):
        error (str):
        deployed_model_id (str):
    """

    at: datetime.datetime
    latency_ms: float
    ok: bool
    error: str
    deployed_model_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        at = self.at.isoformat()

        latency_ms = self.latency_ms

        ok = self.ok

        error = self.error

        deployed_model_id = self.deployed_model_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "at": at,
                "latency_ms": latency_ms,
                "ok": ok,
                "error": error,
                "deployed_model_id": deployed_model_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        at = datetime.datetime.fromisoformat(d.pop("at"))

        latency_ms = d.pop("latency_ms")

        ok = d.pop("ok")

        error = d.pop("error")

        deployed_model_id = d.pop("deployed_model_id")

        sample = cls(
            at=at,
            latency_ms=latency_ms,
            ok=ok,
            error=error,
            deployed_model_id=deployed_model_id,
        )

        sample.additional_properties = d
        return sample

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
