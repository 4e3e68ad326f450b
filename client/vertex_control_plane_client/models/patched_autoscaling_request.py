from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.autoscaling_metric_enum import AutoscalingMetricEnum
from ..models.blank_enum import BlankEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="PatchedAutoscalingRequest")


@_attrs_define
class PatchedAutoscalingRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        min_replicas (int | Unset):
        max_replicas (int | Unset):
        autoscaling_metric (AutoscalingMetricEnum | BlankEnum | Unset):  Default: BlankEnum.VALUE_0.
        autoscaling_target (int | Unset):  Default: 0.
    """

    min_replicas: int | Unset = UNSET
    max_replicas: int | Unset = UNSET
    autoscaling_metric: AutoscalingMetricEnum | BlankEnum | Unset = BlankEnum.VALUE_0
    autoscaling_target: int | Unset = 0

    def to_dict(self) -> dict[str, Any]:
        min_replicas = self.min_replicas

        max_replicas = self.max_replicas

        autoscaling_metric: str | Unset
        if isinstance(self.autoscaling_metric, Unset):
            autoscaling_metric = UNSET
        elif isinstance(self.autoscaling_metric, AutoscalingMetricEnum):
            autoscaling_metric = self.autoscaling_metric.value
        else:
            autoscaling_metric = self.autoscaling_metric.value

        autoscaling_target = self.autoscaling_target

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if min_replicas is not UNSET:
            field_dict["min_replicas"] = min_replicas
        if max_replicas is not UNSET:
            field_dict["max_replicas"] = max_replicas
        if autoscaling_metric is not UNSET:
            field_dict["autoscaling_metric"] = autoscaling_metric
        if autoscaling_target is not UNSET:
            field_dict["autoscaling_target"] = autoscaling_target

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        min_replicas = d.pop("min_replicas", UNSET)

        max_replicas = d.pop("max_replicas", UNSET)

        def _parse_autoscaling_metric(data: object) -> AutoscalingMetricEnum | BlankEnum | Unset:
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                autoscaling_metric_type_0 = AutoscalingMetricEnum(data)

                return autoscaling_metric_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            if not isinstance(data, str):
                raise TypeError()
            autoscaling_metric_type_1 = BlankEnum(data)

            return autoscaling_metric_type_1

        autoscaling_metric = _parse_autoscaling_metric(d.pop("autoscaling_metric", UNSET))

        autoscaling_target = d.pop("autoscaling_target", UNSET)

        patched_autoscaling_request = cls(
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            autoscaling_metric=autoscaling_metric,
            autoscaling_target=autoscaling_target,
        )

        return patched_autoscaling_request
