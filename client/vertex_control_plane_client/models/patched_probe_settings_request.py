from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="PatchedProbeSettingsRequest")


@_attrs_define
class PatchedProbeSettingsRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        probe_enabled (bool | Unset):
        probe_interval_s (float | Unset):
        probe_payload (Any | Unset): {"instances": [...], "parameters": {...}}
    """

    probe_enabled: bool | Unset = UNSET
    probe_interval_s: float | Unset = UNSET
    probe_payload: Any | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        probe_enabled = self.probe_enabled

        probe_interval_s = self.probe_interval_s

        probe_payload = self.probe_payload

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if probe_enabled is not UNSET:
            field_dict["probe_enabled"] = probe_enabled
        if probe_interval_s is not UNSET:
            field_dict["probe_interval_s"] = probe_interval_s
        if probe_payload is not UNSET:
            field_dict["probe_payload"] = probe_payload

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        probe_enabled = d.pop("probe_enabled", UNSET)

        probe_interval_s = d.pop("probe_interval_s", UNSET)

        probe_payload = d.pop("probe_payload", UNSET)

        patched_probe_settings_request = cls(
            probe_enabled=probe_enabled,
            probe_interval_s=probe_interval_s,
            probe_payload=probe_payload,
        )

        return patched_probe_settings_request
