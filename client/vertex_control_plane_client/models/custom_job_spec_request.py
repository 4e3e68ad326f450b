from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.custom_job_spec_request_worker_pool_specs_item import (
        CustomJobSpecRequestWorkerPoolSpecsItem,
    )


T = TypeVar("T", bound="CustomJobSpecRequest")


@_attrs_define
class CustomJobSpecRequest:
    """A CustomJobSpec, as gcloud's --config file holds it (in JSON).

    Attributes:
        worker_pool_specs (list[CustomJobSpecRequestWorkerPoolSpecsItem]):
    """

    worker_pool_specs: list[CustomJobSpecRequestWorkerPoolSpecsItem]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        worker_pool_specs = []
        for worker_pool_specs_item_data in self.worker_pool_specs:
            worker_pool_specs_item = worker_pool_specs_item_data.to_dict()
            worker_pool_specs.append(worker_pool_specs_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "workerPoolSpecs": worker_pool_specs,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.custom_job_spec_request_worker_pool_specs_item import (
            CustomJobSpecRequestWorkerPoolSpecsItem,  # noqa: PLC0415
        )

        d = dict(src_dict)
        worker_pool_specs = []
        _worker_pool_specs = d.pop("workerPoolSpecs")
        for worker_pool_specs_item_data in _worker_pool_specs:
            worker_pool_specs_item = CustomJobSpecRequestWorkerPoolSpecsItem.from_dict(worker_pool_specs_item_data)

            worker_pool_specs.append(worker_pool_specs_item)

        custom_job_spec_request = cls(
            worker_pool_specs=worker_pool_specs,
        )

        custom_job_spec_request.additional_properties = d
        return custom_job_spec_request

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
