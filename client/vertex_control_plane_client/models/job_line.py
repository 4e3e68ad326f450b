from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="JobLine")


@_attrs_define
class JobLine:
    """
    Attributes:
        job (int):
        name (str):
        billed_accelerator_seconds (float):
        goodput (float | None):
    """

    job: int
    name: str
    billed_accelerator_seconds: float
    goodput: float | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        job = self.job

        name = self.name

        billed_accelerator_seconds = self.billed_accelerator_seconds

        goodput: float | None
        goodput = self.goodput

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "job": job,
                "name": name,
                "billed_accelerator_seconds": billed_accelerator_seconds,
                "goodput": goodput,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        job = d.pop("job")

        name = d.pop("name")

        billed_accelerator_seconds = d.pop("billed_accelerator_seconds")

        def _parse_goodput(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        goodput = _parse_goodput(d.pop("goodput"))

        job_line = cls(
            job=job,
            name=name,
            billed_accelerator_seconds=billed_accelerator_seconds,
            goodput=goodput,
        )

        job_line.additional_properties = d
        return job_line

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
