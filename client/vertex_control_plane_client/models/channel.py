from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.channel_kind_enum import ChannelKindEnum
from ..models.notify_on_enum import NotifyOnEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="Channel")


@_attrs_define
class Channel:
    """
    Attributes:
        id (int):
        name (str):
        kind (ChannelKindEnum): * `webhook` - Incoming webhook
            * `bot` - Bot token and channel
        notify_on (list[NotifyOnEnum]):
        secret_hint (str):
        disabled_reason (str):
        disabled_at (datetime.datetime | None):
        created_at (datetime.datetime):
        last_sent_at (datetime.datetime | None):
        slack_channel (str | Unset):
        enabled (bool | Unset):
    """

    id: int
    name: str
    kind: ChannelKindEnum
    notify_on: list[NotifyOnEnum]
    secret_hint: str
    disabled_reason: str
    disabled_at: datetime.datetime | None
    created_at: datetime.datetime
    last_sent_at: datetime.datetime | None
    slack_channel: str | Unset = UNSET
    enabled: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        name = self.name

        kind = self.kind.value

        notify_on = []
        for notify_on_item_data in self.notify_on:
            notify_on_item = notify_on_item_data.value
            notify_on.append(notify_on_item)

        secret_hint = self.secret_hint

        disabled_reason = self.disabled_reason

        disabled_at: None | str
        if isinstance(self.disabled_at, datetime.datetime):
            disabled_at = self.disabled_at.isoformat()
        else:
            disabled_at = self.disabled_at

        created_at = self.created_at.isoformat()

        last_sent_at: None | str
        if isinstance(self.last_sent_at, datetime.datetime):
            last_sent_at = self.last_sent_at.isoformat()
        else:
            last_sent_at = self.last_sent_at

        slack_channel = self.slack_channel

        enabled = self.enabled

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "kind": kind,
                "notify_on": notify_on,
                "secret_hint": secret_hint,
                "disabled_reason": disabled_reason,
                "disabled_at": disabled_at,
                "created_at": created_at,
                "last_sent_at": last_sent_at,
            }
        )
        if slack_channel is not UNSET:
            field_dict["slack_channel"] = slack_channel
        if enabled is not UNSET:
            field_dict["enabled"] = enabled

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        name = d.pop("name")

        kind = ChannelKindEnum(d.pop("kind"))

        notify_on = []
        _notify_on = d.pop("notify_on")
        for notify_on_item_data in _notify_on:
            notify_on_item = NotifyOnEnum(notify_on_item_data)

            notify_on.append(notify_on_item)

        secret_hint = d.pop("secret_hint")

        disabled_reason = d.pop("disabled_reason")

        def _parse_disabled_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                disabled_at_type_0 = datetime.datetime.fromisoformat(data)

                return disabled_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        disabled_at = _parse_disabled_at(d.pop("disabled_at"))

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_last_sent_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                last_sent_at_type_0 = datetime.datetime.fromisoformat(data)

                return last_sent_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        last_sent_at = _parse_last_sent_at(d.pop("last_sent_at"))

        slack_channel = d.pop("slack_channel", UNSET)

        enabled = d.pop("enabled", UNSET)

        channel = cls(
            id=id,
            name=name,
            kind=kind,
            notify_on=notify_on,
            secret_hint=secret_hint,
            disabled_reason=disabled_reason,
            disabled_at=disabled_at,
            created_at=created_at,
            last_sent_at=last_sent_at,
            slack_channel=slack_channel,
            enabled=enabled,
        )

        channel.additional_properties = d
        return channel

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
