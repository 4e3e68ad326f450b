from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="PredictRequest")


@_attrs_define
class PredictRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        instances (list[Any]):
        parameters (Any | Unset):
    """

    instances: list[Any]
    parameters: Any | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        instances = self.instances

        parameters = self.parameters

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "instances": instances,
            }
        )
        if parameters is not UNSET:
            field_dict["parameters"] = parameters

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        instances = cast(list[Any], d.pop("instances"))

        parameters = d.pop("parameters", UNSET)

        predict_request = cls(
            instances=instances,
            parameters=parameters,
        )

        return predict_request
