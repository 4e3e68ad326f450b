from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.imported_errors import ImportedErrors
    from ..models.imported_request import ImportedRequest


T = TypeVar("T", bound="Imported")


@_attrs_define
class Imported:
    """
    Attributes:
        kind (str): CustomJob or CustomJobSpec
        request (ImportedRequest): A body for POST /api/v1/jobs/.
        errors (ImportedErrors): The document's errors keyed by its field paths.
        warnings (list[str]):
        valid (bool):
    """

    kind: str
    request: ImportedRequest
    errors: ImportedErrors
    warnings: list[str]
    valid: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        request = self.request.to_dict()

        errors = self.errors.to_dict()

        warnings = self.warnings

        valid = self.valid

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "request": request,
                "errors": errors,
                "warnings": warnings,
                "valid": valid,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.imported_errors import ImportedErrors  # noqa: PLC0415
        from ..models.imported_request import ImportedRequest  # noqa: PLC0415

        d = dict(src_dict)
        kind = d.pop("kind")

        request = ImportedRequest.from_dict(d.pop("request"))

        errors = ImportedErrors.from_dict(d.pop("errors"))

        warnings = cast(list[str], d.pop("warnings"))

        valid = d.pop("valid")

        imported = cls(
            kind=kind,
            request=request,
            errors=errors,
            warnings=warnings,
            valid=valid,
        )

        imported.additional_properties = d
        return imported

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
