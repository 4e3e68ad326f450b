from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.clusters_ray_jobs_logs_retrieve_response_200_lines_item import (
        ClustersRayJobsLogsRetrieveResponse200LinesItem,
    )


T = TypeVar("T", bound="ClustersRayJobsLogsRetrieveResponse200")


@_attrs_define
class ClustersRayJobsLogsRetrieveResponse200:
    """
    Attributes:
        logs (str | Unset): the driver's output; with a filter, its matching lines
        matched (int | Unset):
        lines (list[ClustersRayJobsLogsRetrieveResponse200LinesItem] | Unset): the newest matching lines
    """

    logs: str | Unset = UNSET
    matched: int | Unset = UNSET
    lines: list[ClustersRayJobsLogsRetrieveResponse200LinesItem] | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        logs = self.logs

        matched = self.matched

        lines: list[dict[str, Any]] | Unset = UNSET
        if not isinstance(self.lines, Unset):
            lines = []
            for lines_item_data in self.lines:
                lines_item = lines_item_data.to_dict()
                lines.append(lines_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if logs is not UNSET:
            field_dict["logs"] = logs
        if matched is not UNSET:
            field_dict["matched"] = matched
        if lines is not UNSET:
            field_dict["lines"] = lines

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.clusters_ray_jobs_logs_retrieve_response_200_lines_item import (
            ClustersRayJobsLogsRetrieveResponse200LinesItem,  # noqa: PLC0415
        )

        d = dict(src_dict)
        logs = d.pop("logs", UNSET)

        matched = d.pop("matched", UNSET)

        _lines = d.pop("lines", UNSET)
        lines: list[ClustersRayJobsLogsRetrieveResponse200LinesItem] | Unset = UNSET
        if _lines is not UNSET:
            lines = []
            for lines_item_data in _lines:
                lines_item = ClustersRayJobsLogsRetrieveResponse200LinesItem.from_dict(lines_item_data)

                lines.append(lines_item)

        clusters_ray_jobs_logs_retrieve_response_200 = cls(
            logs=logs,
            matched=matched,
            lines=lines,
        )

        clusters_ray_jobs_logs_retrieve_response_200.additional_properties = d
        return clusters_ray_jobs_logs_retrieve_response_200

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
