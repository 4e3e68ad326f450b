from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define

from ..models.autoscaling_metric_enum import AutoscalingMetricEnum
from ..models.blank_enum import BlankEnum
from ..types import UNSET, Unset

T = TypeVar("T", bound="DeployRequest")


@_attrs_define
class DeployRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        model (int): A READY model registry entry's id.
        machine_type (str | Unset):  Default: 'n1-standard-4'.
        accelerator_type (str | Unset):  Default: ''.
        accelerator_count (int | Unset):  Default: 0.
        min_replicas (int | Unset):  Default: 1.
        max_replicas (int | Unset):
        autoscaling_metric (AutoscalingMetricEnum | BlankEnum | Unset):  Default: BlankEnum.VALUE_0.
        autoscaling_target (int | Unset):  Default: 0.
        traffic_percent (int | Unset):  Default: 100.
    """

    model: int
    machine_type: str | Unset = "n1-standard-4"
    accelerator_type: str | Unset = ""
    accelerator_count: int | Unset = 0
    min_replicas: int | Unset = 1
    max_replicas: int | Unset = UNSET
    autoscaling_metric: AutoscalingMetricEnum | BlankEnum | Unset = BlankEnum.VALUE_0
    autoscaling_target: int | Unset = 0
    traffic_percent: int | Unset = 100

    def to_dict(self) -> dict[str, Any]:
        model = self.model

        machine_type = self.machine_type

        accelerator_type = self.accelerator_type

        accelerator_count = self.accelerator_count

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

        traffic_percent = self.traffic_percent

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "model": model,
            }
        )
        if machine_type is not UNSET:
            field_dict["machine_type"] = machine_type
        if accelerator_type is not UNSET:
            field_dict["accelerator_type"] = accelerator_type
        if accelerator_count is not UNSET:
            field_dict["accelerator_count"] = accelerator_count
        if min_replicas is not UNSET:
            field_dict["min_replicas"] = min_replicas
        if max_replicas is not UNSET:
            field_dict["max_replicas"] = max_replicas
        if autoscaling_metric is not UNSET:
            field_dict["autoscaling_metric"] = autoscaling_metric
        if autoscaling_target is not UNSET:
            field_dict["autoscaling_target"] = autoscaling_target
        if traffic_percent is not UNSET:
            field_dict["traffic_percent"] = traffic_percent

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        model = d.pop("model")

        machine_type = d.pop("machine_type", UNSET)

        accelerator_type = d.pop("accelerator_type", UNSET)

        accelerator_count = d.pop("accelerator_count", UNSET)

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

        traffic_percent = d.pop("traffic_percent", UNSET)

        deploy_request = cls(
            model=model,
            machine_type=machine_type,
            accelerator_type=accelerator_type,
            accelerator_count=accelerator_count,
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            autoscaling_metric=autoscaling_metric,
            autoscaling_target=autoscaling_target,
            traffic_percent=traffic_percent,
        )

        return deploy_request
