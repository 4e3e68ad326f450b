from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AuditEntry")


@_attrs_define
class AuditEntry:
    """
    Attributes:
        id (int):
        at (datetime.datetime):
        actor (str):
        team (str):
        action (str):
        target_type (str):
        target_id (str):
        target_name (str):
        via (str):
        detail (Any):
    """

    id: int
    at: datetime.datetime
    actor: str
    team: str
    action: str
    target_type: str
    target_id: str
    target_name: str
    via: str
    detail: Any
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        at = self.at.isoformat()

        actor = self.actor

        team = self.team

        action = self.action

        target_type = self.target_type

        target_id = self.target_id

        target_name = self.target_name

        via = self.via

        detail = self.detail

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "at": at,
                "actor": actor,
                "team": team,
                "action": action,
                "target_type": target_type,
                "target_id": target_id,
                "target_name": target_name,
                "via": via,
                "detail": detail,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        at = datetime.datetime.fromisoformat(d.pop("at"))

        actor = d.pop("actor")

        team = d.pop("team")

        action = d.pop("action")

        target_type = d.pop("target_type")

        target_id = d.pop("target_id")

        target_name = d.pop("target_name")

        via = d.pop("via")

        detail = d.pop("detail")

        audit_entry = cls(
            id=id,
            at=at,
            actor=actor,
            team=team,
            action=action,
            target_type=target_type,
            target_id=target_id,
            target_name=target_name,
            via=via,
            detail=detail,
        )

        audit_entry.additional_properties = d
        return audit_entry

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
