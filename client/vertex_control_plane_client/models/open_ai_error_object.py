from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="OpenAIErrorObject")


@_attrs_define
class OpenAIErrorObject:
    """
    Attributes:
        message (str):
        type_ (str):
        param (None | str):
        code (None | str):
    """

    message: str
    type_: str
    param: None | str
    code: None | str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        message = self.message

        type_ = self.type_

        param: None | str
        param = self.param

        code: None | str
        code = self.code

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "message": message,
                "type": type_,
                "param": param,
                "code": code,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        message = d.pop("message")

        type_ = d.pop("type")

        def _parse_param(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        param = _parse_param(d.pop("param"))

        def _parse_code(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        code = _parse_code(d.pop("code"))

        open_ai_error_object = cls(
            message=message,
            type_=type_,
            param=param,
            code=code,
        )

        open_ai_error_object.additional_properties = d
        return open_ai_error_object

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
