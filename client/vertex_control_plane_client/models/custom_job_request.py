from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.custom_job_request_job_spec import CustomJobRequestJobSpec
    from ..models.custom_job_request_labels import CustomJobRequestLabels


T = TypeVar("T", bound="CustomJobRequest")


@_attrs_define
class CustomJobRequest:
    """A Vertex CustomJob in its REST JSON, e.g. what `gcloud ai custom-jobs describe
    --format=json` prints; ?team= and ?region= say where it goes.

        Attributes:
            display_name (str): The job's name (Vertex takes at most 128 characters).
            job_spec (CustomJobRequestJobSpec): The CustomJobSpec: workerPoolSpecs, scheduling, baseOutputDirectory, ...
            labels (CustomJobRequestLabels | Unset):
    """

    display_name: str
    job_spec: CustomJobRequestJobSpec
    labels: CustomJobRequestLabels | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        display_name = self.display_name

        job_spec = self.job_spec.to_dict()

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "displayName": display_name,
                "jobSpec": job_spec,
            }
        )
        if labels is not UNSET:
            field_dict["labels"] = labels

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.custom_job_request_job_spec import CustomJobRequestJobSpec  # noqa: PLC0415
        from ..models.custom_job_request_labels import CustomJobRequestLabels  # noqa: PLC0415

        d = dict(src_dict)
        display_name = d.pop("displayName")

        job_spec = CustomJobRequestJobSpec.from_dict(d.pop("jobSpec"))

        _labels = d.pop("labels", UNSET)
        labels: CustomJobRequestLabels | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = CustomJobRequestLabels.from_dict(_labels)

        custom_job_request = cls(
            display_name=display_name,
            job_spec=job_spec,
            labels=labels,
        )

        custom_job_request.additional_properties = d
        return custom_job_request

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
