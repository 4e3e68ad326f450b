from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.state_enum import StateEnum

T = TypeVar("T", bound="GroupJob")


@_attrs_define
class GroupJob:
    """
    Attributes:
        id (int):
        name (str):
        state (StateEnum): * `QUEUED_LOCAL` - queued here
            * `QUEUED` - Queued
            * `WAITING_FOR_QUOTA` - waiting for quota
            * `PENDING` - Pending
            * `RUNNING` - Running
            * `CANCELLING` - Cancelling
            * `SUCCEEDED` - Succeeded
            * `FAILED` - Failed
            * `CANCELLED` - Cancelled
        last_loss (float | None):
    """

    id: int
    name: str
    state: StateEnum
    last_loss: float | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        name = self.name

        state = self.state.value

        last_loss: float | None
        last_loss = self.last_loss

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "state": state,
                "last_loss": last_loss,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        name = d.pop("name")

        state = StateEnum(d.pop("state"))

        def _parse_last_loss(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        last_loss = _parse_last_loss(d.pop("last_loss"))

        group_job = cls(
            id=id,
            name=name,
            state=state,
            last_loss=last_loss,
        )

        group_job.additional_properties = d
        return group_job

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
