from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.job_group import JobGroup


T = TypeVar("T", bound="JobGroups")


@_attrs_define
class JobGroups:
    """
    Attributes:
        group_by (str): What the jobs are grouped by: tag:KEY, config:KEY or sweep.
        groups (list[JobGroup]): The largest groups first.
        more (bool): There were more groups than `limit`: the smallest are left out.
        limit (int): The most groups answered.
    """

    group_by: str
    groups: list[JobGroup]
    more: bool
    limit: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        group_by = self.group_by

        groups = []
        for groups_item_data in self.groups:
            groups_item = groups_item_data.to_dict()
            groups.append(groups_item)

        more = self.more

        limit = self.limit

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "group_by": group_by,
                "groups": groups,
                "more": more,
                "limit": limit,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_group import JobGroup  # noqa: PLC0415

        d = dict(src_dict)
        group_by = d.pop("group_by")

        groups = []
        _groups = d.pop("groups")
        for groups_item_data in _groups:
            groups_item = JobGroup.from_dict(groups_item_data)

            groups.append(groups_item)

        more = d.pop("more")

        limit = d.pop("limit")

        job_groups = cls(
            group_by=group_by,
            groups=groups,
            more=more,
            limit=limit,
        )

        job_groups.additional_properties = d
        return job_groups

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
