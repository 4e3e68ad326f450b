from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.channel_kind_enum import ChannelKindEnum
from ..models.notify_on_enum import NotifyOnEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="PatchedChannelRequest")


@_attrs_define
class PatchedChannelRequest:
    """
    Attributes:
        name (str | Unset):
        kind (ChannelKindEnum | Unset): * `webhook` - Incoming webhook
            * `bot` - Bot token and channel
        webhook_url (str | Unset):
        bot_token (str | Unset):
        slack_channel (str | Unset):
        notify_on (list[NotifyOnEnum] | Unset):
        enabled (bool | Unset):
    """

    name: str | Unset = UNSET
    kind: ChannelKindEnum | Unset = UNSET
    webhook_url: str | Unset = UNSET
    bot_token: str | Unset = UNSET
    slack_channel: str | Unset = UNSET
    notify_on: list[NotifyOnEnum] | Unset = UNSET
    enabled: bool | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        kind: str | Unset = UNSET
        if not isinstance(self.kind, Unset):
            kind = self.kind.value

        webhook_url = self.webhook_url

        bot_token = self.bot_token

        slack_channel = self.slack_channel

        notify_on: list[str] | Unset = UNSET
        if not isinstance(self.notify_on, Unset):
            notify_on = []
            for notify_on_item_data in self.notify_on:
                notify_on_item = notify_on_item_data.value
                notify_on.append(notify_on_item)

        enabled = self.enabled

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if name is not UNSET:
            field_dict["name"] = name
        if kind is not UNSET:
            field_dict["kind"] = kind
        if webhook_url is not UNSET:
            field_dict["webhook_url"] = webhook_url
        if bot_token is not UNSET:
            field_dict["bot_token"] = bot_token
        if slack_channel is not UNSET:
            field_dict["slack_channel"] = slack_channel
        if notify_on is not UNSET:
            field_dict["notify_on"] = notify_on
        if enabled is not UNSET:
            field_dict["enabled"] = enabled

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name", UNSET)

        _kind = d.pop("kind", UNSET)
        kind: ChannelKindEnum | Unset
        if isinstance(_kind, Unset):
            kind = UNSET
        else:
            kind = ChannelKindEnum(_kind)

        webhook_url = d.pop("webhook_url", UNSET)

        bot_token = d.pop("bot_token", UNSET)

        slack_channel = d.pop("slack_channel", UNSET)

        _notify_on = d.pop("notify_on", UNSET)
        notify_on: list[NotifyOnEnum] | Unset = UNSET
        if _notify_on is not UNSET:
            notify_on = []
            for notify_on_item_data in _notify_on:
                notify_on_item = NotifyOnEnum(notify_on_item_data)

                notify_on.append(notify_on_item)

        enabled = d.pop("enabled", UNSET)

        patched_channel_request = cls(
            name=name,
            kind=kind,
            webhook_url=webhook_url,
            bot_token=bot_token,
            slack_channel=slack_channel,
            notify_on=notify_on,
            enabled=enabled,
        )

        patched_channel_request.additional_properties = d
        return patched_channel_request

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
