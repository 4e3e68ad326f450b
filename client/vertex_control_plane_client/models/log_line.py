from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="LogLine")


@_attrs_define
class LogLine:
    """
    Attributes:
        attempt (int):
        timestamp (datetime.datetime):
        severity (int):
        replica (str):
        message (str):
        insert_id (str):
    """

    attempt: int
    timestamp: datetime.datetime
    severity: int
    replica: str
    message: str
    insert_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt

        timestamp = self.timestamp.isoformat()

        severity = self.severity

        replica = self.replica

        message = self.message

        insert_id = self.insert_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "timestamp": timestamp,
                "severity": severity,
                "replica": replica,
                "message": message,
                "insert_id": insert_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempt = d.pop("attempt")

        timestamp = datetime.datetime.fromisoformat(d.pop("timestamp"))

        severity = d.pop("severity")

        replica = d.pop("replica")

        message = d.pop("message")

        insert_id = d.pop("insert_id")

        log_line = cls(
            attempt=attempt,
            timestamp=timestamp,
            severity=severity,
            replica=replica,
            message=message,
            insert_id=insert_id,
        )

        log_line.additional_properties = d
        return log_line

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
