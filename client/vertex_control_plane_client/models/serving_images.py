from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.picker_image import PickerImage


T = TypeVar("T", bound="ServingImages")


@_attrs_define
class ServingImages:
    """
    Attributes:
        team (str):
        images (list[PickerImage]):
        unreadable (list[str]): Locations whose repositories could not be read, and why.
    """

    team: str
    images: list[PickerImage]
    unreadable: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        team = self.team

        images = []
        for images_item_data in self.images:
            images_item = images_item_data.to_dict()
            images.append(images_item)

        unreadable = self.unreadable

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "team": team,
                "images": images,
                "unreadable": unreadable,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.picker_image import PickerImage  # noqa: PLC0415

        d = dict(src_dict)
        team = d.pop("team")

        images = []
        _images = d.pop("images")
        for images_item_data in _images:
            images_item = PickerImage.from_dict(images_item_data)

            images.append(images_item)

        unreadable = cast(list[str], d.pop("unreadable"))

        serving_images = cls(
            team=team,
            images=images,
            unreadable=unreadable,
        )

        serving_images.additional_properties = d
        return serving_images

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
