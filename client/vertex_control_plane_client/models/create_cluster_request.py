from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.create_cluster_request_labels import CreateClusterRequestLabels
    from ..models.create_cluster_request_pools_item import CreateClusterRequestPoolsItem
    from ..models.create_cluster_request_ray_type_0 import CreateClusterRequestRayType0


T = TypeVar("T", bound="CreateClusterRequest")


@_attrs_define
class CreateClusterRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        name (str): Lowercase letters, digits, hyphens.
        pools (list[CreateClusterRequestPoolsItem]): Resource pools: id, machine_type, replica_count, accelerator_type,
            accelerator_count, min_replica_count, max_replica_count, boot_disk_type, boot_disk_size_gb. The first runs the
            Ray head.
        team (str | Unset):
        display_name (str | Unset):
        ray (CreateClusterRequestRayType0 | None | Unset): version, python, image_uri, head_pool_id; null for a cluster
            without Ray.
        network (str | Unset):
        service_account (str | Unset):
        labels (CreateClusterRequestLabels | Unset):
    """

    name: str
    pools: list[CreateClusterRequestPoolsItem]
    team: str | Unset = UNSET
    display_name: str | Unset = UNSET
    ray: CreateClusterRequestRayType0 | None | Unset = UNSET
    network: str | Unset = UNSET
    service_account: str | Unset = UNSET
    labels: CreateClusterRequestLabels | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.create_cluster_request_ray_type_0 import (
            CreateClusterRequestRayType0,  # noqa: PLC0415
        )

        name = self.name

        pools = []
        for pools_item_data in self.pools:
            pools_item = pools_item_data.to_dict()
            pools.append(pools_item)

        team = self.team

        display_name = self.display_name

        ray: dict[str, Any] | None | Unset
        if isinstance(self.ray, Unset):
            ray = UNSET
        elif isinstance(self.ray, CreateClusterRequestRayType0):
            ray = self.ray.to_dict()
        else:
            ray = self.ray

        network = self.network

        service_account = self.service_account

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "pools": pools,
            }
        )
        if team is not UNSET:
            field_dict["team"] = team
        if display_name is not UNSET:
            field_dict["display_name"] = display_name
        if ray is not UNSET:
            field_dict["ray"] = ray
        if network is not UNSET:
            field_dict["network"] = network
        if service_account is not UNSET:
            field_dict["service_account"] = service_account
        if labels is not UNSET:
            field_dict["labels"] = labels

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.create_cluster_request_labels import CreateClusterRequestLabels  # noqa: PLC0415
        from ..models.create_cluster_request_pools_item import (
            CreateClusterRequestPoolsItem,  # noqa: PLC0415
        )
        from ..models.create_cluster_request_ray_type_0 import (
            CreateClusterRequestRayType0,  # noqa: PLC0415
        )

        d = dict(src_dict)
        name = d.pop("name")

        pools = []
        _pools = d.pop("pools")
        for pools_item_data in _pools:
            pools_item = CreateClusterRequestPoolsItem.from_dict(pools_item_data)

            pools.append(pools_item)

        team = d.pop("team", UNSET)

        display_name = d.pop("display_name", UNSET)

        def _parse_ray(data: object) -> CreateClusterRequestRayType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                ray_type_0 = CreateClusterRequestRayType0.from_dict(data)

                return ray_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CreateClusterRequestRayType0 | None | Unset, data)

        ray = _parse_ray(d.pop("ray", UNSET))

        network = d.pop("network", UNSET)

        service_account = d.pop("service_account", UNSET)

        _labels = d.pop("labels", UNSET)
        labels: CreateClusterRequestLabels | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = CreateClusterRequestLabels.from_dict(_labels)

        create_cluster_request = cls(
            name=name,
            pools=pools,
            team=team,
            display_name=display_name,
            ray=ray,
            network=network,
            service_account=service_account,
            labels=labels,
        )

        return create_cluster_request
