from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.autoscaling_metric_enum import AutoscalingMetricEnum
from ..models.blank_enum import BlankEnum

T = TypeVar("T", bound="Deployment")


@_attrs_define
class Deployment:
    """
    Attributes:
        id (int):
        endpoint (int):
        model (int):
        model_name (str):
        deployed_model_id (str):
        machine_type (str):
        accelerator_type (str):
        accelerator_count (int):
        min_replicas (int):
        max_replicas (int):
        autoscaling_metric (AutoscalingMetricEnum | BlankEnum):
        autoscaling_target (int):
        traffic_percent (int):
        state (str):
        available_replicas (int):
        error_message (str):
        created_at (datetime.datetime):
        deployed_at (datetime.datetime | None):
        undeployed_at (datetime.datetime | None):
    """

    id: int
    endpoint: int
    model: int
    model_name: str
    deployed_model_id: str
    machine_type: str
    accelerator_type: str
    accelerator_count: int
    min_replicas: int
    max_replicas: int
    autoscaling_metric: AutoscalingMetricEnum | BlankEnum
    autoscaling_target: int
    traffic_percent: int
    state: str
    available_replicas: int
    error_message: str
    created_at: datetime.datetime
    deployed_at: datetime.datetime | None
    undeployed_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        endpoint = self.endpoint

        model = self.model

        model_name = self.model_name

        deployed_model_id = self.deployed_model_id

        machine_type = self.machine_type

        accelerator_type = self.accelerator_type

        accelerator_count = self.accelerator_count

        min_replicas = self.min_replicas

        max_replicas = self.max_replicas

        autoscaling_metric: str
        if isinstance(self.autoscaling_metric, AutoscalingMetricEnum):
            autoscaling_metric = self.autoscaling_metric.value
        else:
            autoscaling_metric = self.autoscaling_metric.value

        autoscaling_target = self.autoscaling_target

        traffic_percent = self.traffic_percent

        state = self.state

        available_replicas = self.available_replicas

        error_message = self.error_message

        created_at = self.created_at.isoformat()

        deployed_at: None | str
        if isinstance(self.deployed_at, datetime.datetime):
            deployed_at = self.deployed_at.isoformat()
        else:
            deployed_at = self.deployed_at

        undeployed_at: None | str
        if isinstance(self.undeployed_at, datetime.datetime):
            undeployed_at = self.undeployed_at.isoformat()
        else:
            undeployed_at = self.undeployed_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "endpoint": endpoint,
                "model": model,
                "model_name": model_name,
                "deployed_model_id": deployed_model_id,
                "machine_type": machine_type,
                "accelerator_type": accelerator_type,
                "accelerator_count": accelerator_count,
                "min_replicas": min_replicas,
                "max_replicas": max_replicas,
                "autoscaling_metric": autoscaling_metric,
                "autoscaling_target": autoscaling_target,
                "traffic_percent": traffic_percent,
                "state": state,
                "available_replicas": available_replicas,
                "error_message": error_message,
                "created_at": created_at,
                "deployed_at": deployed_at,
                "undeployed_at": undeployed_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        endpoint = d.pop("endpoint")

        model = d.pop("model")

        model_name = d.pop("model_name")

        deployed_model_id = d.pop("deployed_model_id")

        machine_type = d.pop("machine_type")

        accelerator_type = d.pop("accelerator_type")

        accelerator_count = d.pop("accelerator_count")

        min_replicas = d.pop("min_replicas")

        max_replicas = d.pop("max_replicas")

        def _parse_autoscaling_metric(data: object) -> AutoscalingMetricEnum | BlankEnum:
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

        autoscaling_metric = _parse_autoscaling_metric(d.pop("autoscaling_metric"))

        autoscaling_target = d.pop("autoscaling_target")

        traffic_percent = d.pop("traffic_percent")

        state = d.pop("state")

        available_replicas = d.pop("available_replicas")

        error_message = d.pop("error_message")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

        def _parse_deployed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                deployed_at_type_0 = datetime.datetime.fromisoformat(data)

                return deployed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        deployed_at = _parse_deployed_at(d.pop("deployed_at"))

        def _parse_undeployed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                undeployed_at_type_0 = datetime.datetime.fromisoformat(data)

                return undeployed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        undeployed_at = _parse_undeployed_at(d.pop("undeployed_at"))

        deployment = cls(
            id=id,
            endpoint=endpoint,
            model=model,
            model_name=model_name,
            deployed_model_id=deployed_model_id,
            machine_type=machine_type,
            accelerator_type=accelerator_type,
            accelerator_count=accelerator_count,
            min_replicas=min_replicas,
            max_replicas=max_replicas,
            autoscaling_metric=autoscaling_metric,
            autoscaling_target=autoscaling_target,
            traffic_percent=traffic_percent,
            state=state,
            available_replicas=available_replicas,
            error_message=error_message,
            created_at=created_at,
            deployed_at=deployed_at,
            undeployed_at=undeployed_at,
        )

        deployment.additional_properties = d
        return deployment

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
