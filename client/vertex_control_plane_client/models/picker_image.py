from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.source_enum import SourceEnum

T = TypeVar("T", bound="PickerImage")


@_attrs_define
class PickerImage:
    """
    Attributes:
        uri (str): LOCATION-docker.pkg.dev/PROJECT/REPOSITORY/IMAGE
        tags (list[str]): Newest first.
        source (SourceEnum): * `team` - team
            * `google` - google
    """

    uri: str
    tags: list[str]
    source: SourceEnum
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        uri = self.uri

        tags = self.tags

        source = self.source.value

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "uri": uri,
                "tags": tags,
                "source": source,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        uri = d.pop("uri")

        tags = cast(list[str], d.pop("tags"))

        source = SourceEnum(d.pop("source"))

        picker_image = cls(
            uri=uri,
            tags=tags,
            source=source,
        )

        picker_image.additional_properties = d
        return picker_image

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
