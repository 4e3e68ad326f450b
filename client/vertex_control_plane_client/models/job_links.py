from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="JobLinks")


@_attrs_define
class JobLinks:
    """Where to look at the job beside this product, by name: console (the Vertex console page), logs (Logs Explorer with
    the job's filter), errors (Error Reporting), gpu_utilisation and gpu_memory (Cloud Monitoring), tensorboard (when
    the job writes to one), experiment and experiment_run (Vertex Experiments, when the job names them). Against the
    local emulator they are this product's own pages. Empty before Vertex has given the job an id.

    """

    additional_properties: dict[str, str] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        job_links = cls()

        job_links.additional_properties = d
        return job_links

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> str:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: str) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
