from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="Cluster")


@_attrs_define
class Cluster:
    """
    Attributes:
        id (int):
        team (str):
        name (str):
        region (str):
        request (Any):
        resource (Any):
        ray_version (str):
        state (str):
        vertex_name (str):
        dashboard_uri (str):
        error_message (str):
        hourly_micros (int):
        min_hourly_micros (int):
        max_hourly_micros (int):
        price_source (str):
        accrued_micros (int):
        billing (str):
        idle_since (datetime.datetime | None):
        idle_flagged (bool):
        created_at (datetime.datetime):
        running_since (datetime.datetime | None):
        deleted_at (datetime.datetime | None):
    """

    id: int
    team: str
    name: str
    region: str
    request: Any
    resource: Any
    ray_version: str
    state: str
    vertex_name: str
    dashboard_uri: str
    error_message: str
    hourly_micros: int
    min_hourly_micros: int
    max_hourly_micros: int
    price_source: str
    accrued_micros: int
    billing: str
    idle_since: datetime.datetime | None
    idle_flagged: bool
    created_at: datetime.datetime
    running_since: datetime.datetime | None
    deleted_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        team = self.team

        name = self.name

        region = self.region

        request = self.request

        resource = self.resource

        ray_version = self.ray_version

        state = self.state

        vertex_name = self.vertex_name

        dashboard_uri = self.dashboard_uri

        error_message = self.error_message

        hourly_micros = self.hourly_micros

        min_hourly_micros = self.min_hourly_micros

        max_hourly_micros = self.max_hourly_micros

        price_source = self.price_source

        accrued_micros = self.accrued_micros

        billing = self.billing

        idle_since: None | str
        if isinstance(self.idle_since, datetime.datetime):
            idle_since = self.idle_since.isoformat()
        else:
            idle_since = self.idle_since

        idle_flagged = self.idle_flagged

        created_at = self.created_at.isoformat()

        running_since: None | str
        if isinstance(self.running_since, datetime.datetime):
            running_since = self.running_since.isoformat()
        else:
            running_since = self.running_since

        deleted_at: None | str
        if isinstance(self.deleted_at, datetime.datetime):
            deleted_at = self.deleted_at.isoformat()
        else:
            deleted_at = self.deleted_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "team": team,
                "name": name,
                "region": region,
                "request": request,
                "resource": resource,
                "ray_version": ray_version,
                "state": state,
                "vertex_name": vertex_name,
                "dashboard_uri": dashboard_uri,
                "error_message": error_message,
                "hourly_micros": hourly_micros,
                "min_hourly_micros": min_hourly_micros,
                "max_hourly_micros": max_hourly_micros,
                "price_source": price_source,
                "accrued_micros": accrued_micros,
                "billing": billing,
                "idle_since": idle_since,
                "idle_flagged": idle_flagged,
                "created_at": created_at,
                "running_since": running_since,
                "deleted_at": deleted_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        team = d.pop("team")

        name = d.pop("name")

        region = d.pop("region")

        request = d.pop("request")

        resource = d.pop("resource")

        ray_version = d.pop("ray_version")

        state = d.pop("state")

        vertex_name = d.pop("vertex_name")

        dashboard_uri = d.pop("dashboard_uri")

        error_message = d.pop("error_message")

        hourly_micros = d.pop("hourly_micros")

        min_hourly_micros = d.pop("min_hourly_micros")

        max_hourly_micros = d.pop("max_hourly_micros")

        price_source = d.pop("price_source")

        accrued_micros = d.pop("accrued_micros")

        billing = d.pop("billing")

        def _parse_idle_since(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                idle_since_type_0 = datetime.datetime.fromisoformat(data)

                return idle_since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        idle_since = _parse_idle_since(d.pop("idle_since"))

        idle_flagged = d.pop("idle_flagged")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_running_since(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                running_since_type_0 = datetime.datetime.fromisoformat(data)

                return running_since_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        running_since = _parse_running_since(d.pop("running_since"))

        def _parse_deleted_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                deleted_at_type_0 = datetime.datetime.fromisoformat(data)

                return deleted_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        deleted_at = _parse_deleted_at(d.pop("deleted_at"))

        cluster = cls(
            id=id,
            team=team,
            name=name,
            region=region,
            request=request,
            resource=resource,
            ray_version=ray_version,
            state=state,
            vertex_name=vertex_name,
            dashboard_uri=dashboard_uri,
            error_message=error_message,
            hourly_micros=hourly_micros,
            min_hourly_micros=min_hourly_micros,
            max_hourly_micros=max_hourly_micros,
            price_source=price_source,
            accrued_micros=accrued_micros,
            billing=billing,
            idle_since=idle_since,
            idle_flagged=idle_flagged,
            created_at=created_at,
            running_since=running_since,
            deleted_at=deleted_at,
        )

        cluster.additional_properties = d
        return cluster

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
