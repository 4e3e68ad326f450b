from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.estimate_custom_job_request_job_spec import (
        EstimateCustomJobRequestJobSpec,
    )
    from ..models.estimate_custom_job_request_labels import EstimateCustomJobRequestLabels


T = TypeVar("T", bound="EstimateCustomJobRequest")


@_attrs_define
class EstimateCustomJobRequest:
    """A Vertex CustomJob in its REST JSON, e.g. what `gcloud ai custom-jobs describe
    --format=json` prints; ?team= and ?region= say where it goes.

        Attributes:
            display_name (str): The job's name (Vertex takes at most 128 characters).
            job_spec (EstimateCustomJobRequestJobSpec): The CustomJobSpec: workerPoolSpecs, scheduling, baseOutputDirectory,
                ...
            labels (EstimateCustomJobRequestLabels | Unset):
            region (str | Unset):
            hours (float | str | Unset):
            steps (int | Unset):
            step_time_s (float | str | Unset):
    """

    display_name: str
    job_spec: EstimateCustomJobRequestJobSpec
    labels: EstimateCustomJobRequestLabels | Unset = UNSET
    region: str | Unset = UNSET
    hours: float | str | Unset = UNSET
    steps: int | Unset = UNSET
    step_time_s: float | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        display_name = self.display_name

        job_spec = self.job_spec.to_dict()

        labels: dict[str, Any] | Unset = UNSET
        if not isinstance(self.labels, Unset):
            labels = self.labels.to_dict()

        region = self.region

        hours: float | str | Unset
        if isinstance(self.hours, Unset):
            hours = UNSET
        else:
            hours = self.hours

        steps = self.steps

        step_time_s: float | str | Unset
        if isinstance(self.step_time_s, Unset):
            step_time_s = UNSET
        else:
            step_time_s = self.step_time_s

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
        if region is not UNSET:
            field_dict["region"] = region
        if hours is not UNSET:
            field_dict["hours"] = hours
        if steps is not UNSET:
            field_dict["steps"] = steps
        if step_time_s is not UNSET:
            field_dict["step_time_s"] = step_time_s

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.estimate_custom_job_request_job_spec import (
            EstimateCustomJobRequestJobSpec,  # noqa: PLC0415
        )
        from ..models.estimate_custom_job_request_labels import (
            EstimateCustomJobRequestLabels,  # noqa: PLC0415
        )

        d = dict(src_dict)
        display_name = d.pop("displayName")

        job_spec = EstimateCustomJobRequestJobSpec.from_dict(d.pop("jobSpec"))

        _labels = d.pop("labels", UNSET)
        labels: EstimateCustomJobRequestLabels | Unset
        if isinstance(_labels, Unset):
            labels = UNSET
        else:
            labels = EstimateCustomJobRequestLabels.from_dict(_labels)

        region = d.pop("region", UNSET)

        def _parse_hours(data: object) -> float | str | Unset:
            if isinstance(data, Unset):
                return data
            return cast(float | str | Unset, data)

        hours = _parse_hours(d.pop("hours", UNSET))

        steps = d.pop("steps", UNSET)

        def _parse_step_time_s(data: object) -> float | str | Unset:
            if isinstance(data, Unset):
                return data
            return cast(float | str | Unset, data)

        step_time_s = _parse_step_time_s(d.pop("step_time_s", UNSET))

        estimate_custom_job_request = cls(
            display_name=display_name,
            job_spec=job_spec,
            labels=labels,
            region=region,
            hours=hours,
            steps=steps,
            step_time_s=step_time_s,
        )

        estimate_custom_job_request.additional_properties = d
        return estimate_custom_job_request

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
