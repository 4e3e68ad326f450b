from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="ClustersRayJobsLogsRetrieveResponse200LinesItem")


@_attrs_define
class ClustersRayJobsLogsRetrieveResponse200LinesItem:
    """
    Attributes:
        number (int | Unset):
        severity (int | Unset):
        text (str | Unset):
    """

    number: int | Unset = UNSET
    severity: int | Unset = UNSET
    text: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        number = self.number

        severity = self.severity

        text = self.text

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update({})
        if number is not UNSET:
            field_dict["number"] = number
        if severity is not UNSET:
            field_dict["severity"] = severity
        if text is not UNSET:
            field_dict["text"] = text

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        number = d.pop("number", UNSET)

        severity = d.pop("severity", UNSET)

        text = d.pop("text", UNSET)

        clusters_ray_jobs_logs_retrieve_response_200_lines_item = cls(
            number=number,
            severity=severity,
            text=text,
        )

        clusters_ray_jobs_logs_retrieve_response_200_lines_item.additional_properties = d
        return clusters_ray_jobs_logs_retrieve_response_200_lines_item

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
