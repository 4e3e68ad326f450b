from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.preset_request import PresetRequest
    from ..models.preset_scaled_down import PresetScaledDown


T = TypeVar("T", bound="Preset")


@_attrs_define
class Preset:
    """
    Attributes:
        slug (str):
        title (str):
        description (str):
        needs (str):
        notes (list[str]):
        request (PresetRequest): A body for POST /api/v1/jobs/.
        scaled_down (PresetScaledDown): Its local variant, a body for POST /api/v1/jobs/ that the local emulator can
            run: the same strategy, degrees and architecture at a CPU size.
    """

    slug: str
    title: str
    description: str
    needs: str
    notes: list[str]
    request: PresetRequest
    scaled_down: PresetScaledDown
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        slug = self.slug

        title = self.title

        description = self.description

        needs = self.needs

        notes = self.notes

        request = self.request.to_dict()

        scaled_down = self.scaled_down.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "slug": slug,
                "title": title,
                "description": description,
                "needs": needs,
                "notes": notes,
                "request": request,
                "scaled_down": scaled_down,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.preset_request import PresetRequest  # noqa: PLC0415
        from ..models.preset_scaled_down import PresetScaledDown  # noqa: PLC0415

        d = dict(src_dict)
        slug = d.pop("slug")

        title = d.pop("title")

        description = d.pop("description")

        needs = d.pop("needs")

        notes = cast(list[str], d.pop("notes"))

        request = PresetRequest.from_dict(d.pop("request"))

        scaled_down = PresetScaledDown.from_dict(d.pop("scaled_down"))

        preset = cls(
            slug=slug,
            title=title,
            description=description,
            needs=needs,
            notes=notes,
            request=request,
            scaled_down=scaled_down,
        )

        preset.additional_properties = d
        return preset

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
