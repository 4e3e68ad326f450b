from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Event")


@_attrs_define
class Event:
    """
    Attributes:
        kind (str):
        attempt (int):
        timestamp (datetime.datetime):
        replica (str):
        step (int | None):
        data (Any):
    """

    kind: str
    attempt: int
    timestamp: datetime.datetime
    replica: str
    step: int | None
    data: Any
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        attempt = self.attempt

        timestamp = self.timestamp.isoformat()

        replica = self.replica

        step: int | None
        step = self.step

        data = self.data

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "attempt": attempt,
                "timestamp": timestamp,
                "replica": replica,
                "step": step,
                "data": data,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        kind = d.pop("kind")

        attempt = d.pop("attempt")

        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))

        replica = d.pop("replica")

        def _parse_step(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        step = _parse_step(d.pop("step"))

        data = d.pop("data")

        event = cls(
            kind=kind,
            attempt=attempt,
            timestamp=timestamp,
            replica=replica,
            step=step,
            data=data,
        )

        event.additional_properties = d
        return event

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
