from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.format_enum import FormatEnum

if TYPE_CHECKING:
    from ..models.job_check_custom_job_type_0 import JobCheckCustomJobType0
    from ..models.job_check_deepspeed_config_type_0 import JobCheckDeepspeedConfigType0
    from ..models.job_check_errors import JobCheckErrors
    from ..models.job_check_estimate_type_0 import JobCheckEstimateType0
    from ..models.job_check_memory_plan_type_0 import JobCheckMemoryPlanType0
    from ..models.job_check_queue_type_0 import JobCheckQueueType0
    from ..models.job_check_quota_type_0 import JobCheckQuotaType0
    from ..models.job_check_request import JobCheckRequest
    from ..models.job_check_suggestions import JobCheckSuggestions
    from ..models.job_check_warnings import JobCheckWarnings


T = TypeVar("T", bound="JobCheck")


@_attrs_define
class JobCheck:
    """POST /api/v1/jobs/validate/'s answer.

    Attributes:
        valid (bool): Whether POST /api/v1/jobs/ would accept it.
        format_ (FormatEnum): * `request` - request
            * `custom_job` - custom_job
        errors (JobCheckErrors): Keyed by field path: why it would be refused.
        warnings (JobCheckWarnings):
        suggestions (JobCheckSuggestions):
        memory_policy (None | str):
        memory_plan (JobCheckMemoryPlanType0 | None):
        hints (list[Any]):
        world_size (int | None):
        deepspeed_config (JobCheckDeepspeedConfigType0 | None):
        request (JobCheckRequest):
        custom_job (JobCheckCustomJobType0 | None):
        estimate (JobCheckEstimateType0 | None): Integer micro-dollars.
        quota (JobCheckQuotaType0 | None): The project's Vertex quota for each accelerator it needs.
        queue (JobCheckQueueType0 | None): With the queue in front of Vertex on: where the job would land (where:
            admitted | waiting | refused; place, reason, earliest_start, stops, note).
    """

    valid: bool
    format_: FormatEnum
    errors: JobCheckErrors
    warnings: JobCheckWarnings
    suggestions: JobCheckSuggestions
    memory_policy: None | str
    memory_plan: JobCheckMemoryPlanType0 | None
    hints: list[Any]
    world_size: int | None
    deepspeed_config: JobCheckDeepspeedConfigType0 | None
    request: JobCheckRequest
    custom_job: JobCheckCustomJobType0 | None
    estimate: JobCheckEstimateType0 | None
    quota: JobCheckQuotaType0 | None
    queue: JobCheckQueueType0 | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.job_check_custom_job_type_0 import JobCheckCustomJobType0  # noqa: PLC0415
        from ..models.job_check_deepspeed_config_type_0 import (
            JobCheckDeepspeedConfigType0,  # noqa: PLC0415
        )
        from ..models.job_check_estimate_type_0 import JobCheckEstimateType0  # noqa: PLC0415
        from ..models.job_check_memory_plan_type_0 import JobCheckMemoryPlanType0  # noqa: PLC0415
        from ..models.job_check_queue_type_0 import JobCheckQueueType0  # noqa: PLC0415
        from ..models.job_check_quota_type_0 import JobCheckQuotaType0  # noqa: PLC0415

        valid = self.valid

        format_ = self.format_.value

        errors = self.errors.to_dict()

        warnings = self.warnings.to_dict()

        suggestions = self.suggestions.to_dict()

        memory_policy: None | str
        memory_policy = self.memory_policy

        memory_plan: dict[str, Any] | None
        if isinstance(self.memory_plan, JobCheckMemoryPlanType0):
            memory_plan = self.memory_plan.to_dict()
        else:
            memory_plan = self.memory_plan

        hints = self.hints

        world_size: int | None
        world_size = self.world_size

        deepspeed_config: dict[str, Any] | None
        if isinstance(self.deepspeed_config, JobCheckDeepspeedConfigType0):
            deepspeed_config = self.deepspeed_config.to_dict()
        else:
            deepspeed_config = self.deepspeed_config

        request = self.request.to_dict()

        custom_job: dict[str, Any] | None
        if isinstance(self.custom_job, JobCheckCustomJobType0):
            custom_job = self.custom_job.to_dict()
        else:
            custom_job = self.custom_job

        estimate: dict[str, Any] | None
        if isinstance(self.estimate, JobCheckEstimateType0):
            estimate = self.estimate.to_dict()
        else:
            estimate = self.estimate

        quota: dict[str, Any] | None
        if isinstance(self.quota, JobCheckQuotaType0):
            quota = self.quota.to_dict()
        else:
            quota = self.quota

        queue: dict[str, Any] | None
        if isinstance(self.queue, JobCheckQueueType0):
            queue = self.queue.to_dict()
        else:
            queue = self.queue

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "valid": valid,
                "format": format_,
                "errors": errors,
                "warnings": warnings,
                "suggestions": suggestions,
                "memory_policy": memory_policy,
                "memory_plan": memory_plan,
                "hints": hints,
                "world_size": world_size,
                "deepspeed_config": deepspeed_config,
                "request": request,
                "custom_job": custom_job,
                "estimate": estimate,
                "quota": quota,
                "queue": queue,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_check_custom_job_type_0 import JobCheckCustomJobType0  # noqa: PLC0415
        from ..models.job_check_deepspeed_config_type_0 import (
            JobCheckDeepspeedConfigType0,  # noqa: PLC0415
        )
        from ..models.job_check_errors import JobCheckErrors  # noqa: PLC0415
        from ..models.job_check_estimate_type_0 import JobCheckEstimateType0  # noqa: PLC0415
        from ..models.job_check_memory_plan_type_0 import JobCheckMemoryPlanType0  # noqa: PLC0415
        from ..models.job_check_queue_type_0 import JobCheckQueueType0  # noqa: PLC0415
        from ..models.job_check_quota_type_0 import JobCheckQuotaType0  # noqa: PLC0415
        from ..models.job_check_request import JobCheckRequest  # noqa: PLC0415
        from ..models.job_check_suggestions import JobCheckSuggestions  # noqa: PLC0415
        from ..models.job_check_warnings import JobCheckWarnings  # noqa: PLC0415

        d = dict(src_dict)
        valid = d.pop("valid")

        format_ = FormatEnum(d.pop("format"))

        errors = JobCheckErrors.from_dict(d.pop("errors"))

        warnings = JobCheckWarnings.from_dict(d.pop("warnings"))

        suggestions = JobCheckSuggestions.from_dict(d.pop("suggestions"))

        def _parse_memory_policy(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        memory_policy = _parse_memory_policy(d.pop("memory_policy"))

        def _parse_memory_plan(data: object) -> JobCheckMemoryPlanType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                memory_plan_type_0 = JobCheckMemoryPlanType0.from_dict(data)

                return memory_plan_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobCheckMemoryPlanType0 | None, data)

        memory_plan = _parse_memory_plan(d.pop("memory_plan"))

        hints = cast(list[Any], d.pop("hints"))

        def _parse_world_size(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        world_size = _parse_world_size(d.pop("world_size"))

        def _parse_deepspeed_config(data: object) -> JobCheckDeepspeedConfigType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                deepspeed_config_type_0 = JobCheckDeepspeedConfigType0.from_dict(data)

                return deepspeed_config_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobCheckDeepspeedConfigType0 | None, data)

        deepspeed_config = _parse_deepspeed_config(d.pop("deepspeed_config"))

        request = JobCheckRequest.from_dict(d.pop("request"))

        def _parse_custom_job(data: object) -> JobCheckCustomJobType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                custom_job_type_0 = JobCheckCustomJobType0.from_dict(data)

                return custom_job_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobCheckCustomJobType0 | None, data)

        custom_job = _parse_custom_job(d.pop("custom_job"))

        def _parse_estimate(data: object) -> JobCheckEstimateType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                estimate_type_0 = JobCheckEstimateType0.from_dict(data)

                return estimate_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobCheckEstimateType0 | None, data)

        estimate = _parse_estimate(d.pop("estimate"))

        def _parse_quota(data: object) -> JobCheckQuotaType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                quota_type_0 = JobCheckQuotaType0.from_dict(data)

                return quota_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobCheckQuotaType0 | None, data)

        quota = _parse_quota(d.pop("quota"))

        def _parse_queue(data: object) -> JobCheckQueueType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                queue_type_0 = JobCheckQueueType0.from_dict(data)

                return queue_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobCheckQueueType0 | None, data)

        queue = _parse_queue(d.pop("queue"))

        job_check = cls(
            valid=valid,
            format_=format_,
            errors=errors,
            warnings=warnings,
            suggestions=suggestions,
            memory_policy=memory_policy,
            memory_plan=memory_plan,
            hints=hints,
            world_size=world_size,
            deepspeed_config=deepspeed_config,
            request=request,
            custom_job=custom_job,
            estimate=estimate,
            quota=quota,
            queue=queue,
        )

        job_check.additional_properties = d
        return job_check

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
