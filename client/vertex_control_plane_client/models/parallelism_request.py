from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.pipeline_schedule_enum import PipelineScheduleEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="ParallelismRequest")


@_attrs_define
class ParallelismRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        tensor (int | Unset):
        pipeline (int | Unset):
        data (int | Unset): 0 or absent: world size / (tensor x pipeline).
        pipeline_schedule (PipelineScheduleEnum | Unset): * `gpipe` - gpipe
            * `1f1b` - 1f1b
            * `interleaved_1f1b` - interleaved_1f1b
        virtual_stages (int | Unset): Pipeline stages per pipeline rank.
        sequence_parallel (bool | Unset): With tensor > 1.
    """

    tensor: int | Unset = UNSET
    pipeline: int | Unset = UNSET
    data: int | Unset = UNSET
    pipeline_schedule: PipelineScheduleEnum | Unset = UNSET
    virtual_stages: int | Unset = UNSET
    sequence_parallel: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        tensor = self.tensor

        pipeline = self.pipeline

        data = self.data

        pipeline_schedule: str | Unset = UNSET
        if not isinstance(self.pipeline_schedule, Unset):
            pipeline_schedule = self.pipeline_schedule.value

        virtual_stages = self.virtual_stages

        sequence_parallel = self.sequence_parallel

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if tensor is not UNSET:
            field_dict["tensor"] = tensor
        if pipeline is not UNSET:
            field_dict["pipeline"] = pipeline
        if data is not UNSET:
            field_dict["data"] = data
        if pipeline_schedule is not UNSET:
            field_dict["pipeline_schedule"] = pipeline_schedule
        if virtual_stages is not UNSET:
            field_dict["virtual_stages"] = virtual_stages
        if sequence_parallel is not UNSET:
            field_dict["sequence_parallel"] = sequence_parallel

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        tensor = d.pop("tensor", UNSET)

        pipeline = d.pop("pipeline", UNSET)

        data = d.pop("data", UNSET)

        _pipeline_schedule = d.pop("pipeline_schedule", UNSET)
        pipeline_schedule: PipelineScheduleEnum | Unset
        if isinstance(_pipeline_schedule, Unset):
            pipeline_schedule = UNSET
        else:
            pipeline_schedule = PipelineScheduleEnum(_pipeline_schedule)

        virtual_stages = d.pop("virtual_stages", UNSET)

        sequence_parallel = d.pop("sequence_parallel", UNSET)

        parallelism_request = cls(
            tensor=tensor,
            pipeline=pipeline,
            data=data,
            pipeline_schedule=pipeline_schedule,
            virtual_stages=virtual_stages,
            sequence_parallel=sequence_parallel,
        )

        return parallelism_request
