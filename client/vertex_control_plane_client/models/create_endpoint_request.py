from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..models.access_enum import AccessEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="CreateEndpointRequest")


@_attrs_define
class CreateEndpointRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        name (str):
        probe_enabled (bool | Unset):
        probe_interval_s (float | Unset):
        probe_payload (Any | Unset): {"instances": [...], "parameters": {...}}
        team (str | Unset): Team slug; optional when you belong to one team.
        access (AccessEnum | Unset): * `public` - public (the shared prediction domain)
            * `dedicated` - dedicated (its own DNS name, isolated from others' traffic)
            * `private` - private (Private Service Connect, from allowlisted projects) Default: AccessEnum.PUBLIC.
        psc_project_allowlist (list[str] | Unset): Private endpoints: the project ids or numbers whose VPCs may connect.
    """

    name: str
    probe_enabled: bool | Unset = UNSET
    probe_interval_s: float | Unset = UNSET
    probe_payload: Any | Unset = UNSET
    team: str | Unset = UNSET
    access: AccessEnum | Unset = AccessEnum.PUBLIC
    psc_project_allowlist: list[str] | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        probe_enabled = self.probe_enabled

        probe_interval_s = self.probe_interval_s

        probe_payload = self.probe_payload

        team = self.team

        access: str | Unset = UNSET
        if not isinstance(self.access, Unset):
            access = self.access.value

        psc_project_allowlist: list[str] | Unset = UNSET
        if not isinstance(self.psc_project_allowlist, Unset):
            psc_project_allowlist = self.psc_project_allowlist

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if probe_enabled is not UNSET:
            field_dict["probe_enabled"] = probe_enabled
        if probe_interval_s is not UNSET:
            field_dict["probe_interval_s"] = probe_interval_s
        if probe_payload is not UNSET:
            field_dict["probe_payload"] = probe_payload
        if team is not UNSET:
            field_dict["team"] = team
        if access is not UNSET:
            field_dict["access"] = access
        if psc_project_allowlist is not UNSET:
            field_dict["psc_project_allowlist"] = psc_project_allowlist

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        name = d.pop("name")

        probe_enabled = d.pop("probe_enabled", UNSET)

        probe_interval_s = d.pop("probe_interval_s", UNSET)

        probe_payload = d.pop("probe_payload", UNSET)

        team = d.pop("team", UNSET)

        _access = d.pop("access", UNSET)
        access: AccessEnum | Unset
        if isinstance(_access, Unset):
            access = UNSET
        else:
            access = AccessEnum(_access)

        psc_project_allowlist = cast(list[str], d.pop("psc_project_allowlist", UNSET))

        create_endpoint_request = cls(
            name=name,
            probe_enabled=probe_enabled,
            probe_interval_s=probe_interval_s,
            probe_payload=probe_payload,
            team=team,
            access=access,
            psc_project_allowlist=psc_project_allowlist,
        )

        return create_endpoint_request
