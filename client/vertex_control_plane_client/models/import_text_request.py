from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="ImportTextRequest")


@_attrs_define
class ImportTextRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        text (str): gcloud --config YAML, or a CustomJob / CustomJobSpec in JSON or YAML.
    """

    text: str

    def to_dict(self) -> dict[str, Any]:
        text = self.text

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "text": text,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        text = d.pop("text")

        import_text_request = cls(
            text=text,
        )

        return import_text_request
