from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.access_enum import AccessEnum

if TYPE_CHECKING:
    from ..models.endpoint_deployments_item import EndpointDeploymentsItem
    from ..models.endpoint_slo_type_0 import EndpointSloType0


T = TypeVar("T", bound="Endpoint")


@_attrs_define
class Endpoint:
    """
    Attributes:
        id (int):
        team (str):
        name (str):
        state (str):
        vertex_name (str):
        error_message (str):
        created_at (datetime.datetime):
        access (AccessEnum): * `public` - public (the shared prediction domain)
            * `dedicated` - dedicated (its own DNS name, isolated from others' traffic)
            * `private` - private (Private Service Connect, from allowlisted projects)
        psc_project_allowlist (Any):
        dedicated_dns (str):
        service_attachment (str):
        probe_enabled (bool):
        probe_interval_s (float):
        probe_payload (Any):
        deployments (list[EndpointDeploymentsItem]):
        slo (EndpointSloType0 | None):
    """

    id: int
    team: str
    name: str
    state: str
    vertex_name: str
    error_message: str
    created_at: datetime.datetime
    access: AccessEnum
    psc_project_allowlist: Any
    dedicated_dns: str
    service_attachment: str
    probe_enabled: bool
    probe_interval_s: float
    probe_payload: Any
    deployments: list[EndpointDeploymentsItem]
    slo: EndpointSloType0 | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.endpoint_slo_type_0 import EndpointSloType0  # noqa: PLC0415

        id = self.id

        team = self.team

        name = self.name

        state = self.state

        vertex_name = self.vertex_name

        error_message = self.error_message

        created_at = self.created_at.isoformat()

        access = self.access.value

        psc_project_allowlist = self.psc_project_allowlist

        dedicated_dns = self.dedicated_dns

        service_attachment = self.service_attachment

        probe_enabled = self.probe_enabled

        probe_interval_s = self.probe_interval_s

        probe_payload = self.probe_payload

        deployments = []
        for deployments_item_data in self.deployments:
            deployments_item = deployments_item_data.to_dict()
            deployments.append(deployments_item)

        slo: dict[str, Any] | None
        if isinstance(self.slo, EndpointSloType0):
            slo = self.slo.to_dict()
        else:
            slo = self.slo

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "team": team,
                "name": name,
                "state": state,
                "vertex_name": vertex_name,
                "error_message": error_message,
                "created_at": created_at,
                "access": access,
                "psc_project_allowlist": psc_project_allowlist,
                "dedicated_dns": dedicated_dns,
                "service_attachment": service_attachment,
                "probe_enabled": probe_enabled,
                "probe_interval_s": probe_interval_s,
                "probe_payload": probe_payload,
                "deployments": deployments,
                "slo": slo,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.endpoint_deployments_item import EndpointDeploymentsItem  # noqa: PLC0415
        from ..models.endpoint_slo_type_0 import EndpointSloType0  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        team = d.pop("team")

        name = d.pop("name")

        state = d.pop("state")

        vertex_name = d.pop("vertex_name")

        error_message = d.pop("error_message")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        access = AccessEnum(d.pop("access"))

        psc_project_allowlist = d.pop("psc_project_allowlist")

        dedicated_dns = d.pop("dedicated_dns")

        service_attachment = d.pop("service_attachment")

        probe_enabled = d.pop("probe_enabled")

        probe_interval_s = d.pop("probe_interval_s")

        probe_payload = d.pop("probe_payload")

        deployments = []
        _deployments = d.pop("deployments")
        for deployments_item_data in _deployments:
            deployments_item = EndpointDeploymentsItem.from_dict(deployments_item_data)

            deployments.append(deployments_item)

        def _parse_slo(data: object) -> EndpointSloType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                slo_type_0 = EndpointSloType0.from_dict(data)

                return slo_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EndpointSloType0 | None, data)

        slo = _parse_slo(d.pop("slo"))

        endpoint = cls(
            id=id,
            team=team,
            name=name,
            state=state,
            vertex_name=vertex_name,
            error_message=error_message,
            created_at=created_at,
            access=access,
            psc_project_allowlist=psc_project_allowlist,
            dedicated_dns=dedicated_dns,
            service_attachment=service_attachment,
            probe_enabled=probe_enabled,
            probe_interval_s=probe_interval_s,
            probe_payload=probe_payload,
            deployments=deployments,
            slo=slo,
        )

        endpoint.additional_properties = d
        return endpoint

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
