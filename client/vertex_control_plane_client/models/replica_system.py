from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.system_sample import SystemSample


T = TypeVar("T", bound="ReplicaSystem")


@_attrs_define
class ReplicaSystem:
    """
    Attributes:
        replica (str): the task name, e.g. workerpool0-0
        latest (SystemSample):
        history (list[SystemSample]): oldest first, at most 120 samples
    """

    replica: str
    latest: SystemSample
    history: list[SystemSample]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        replica = self.replica

        latest = self.latest.to_dict()

        history = []
        for history_item_data in self.history:
            history_item = history_item_data.to_dict()
            history.append(history_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "replica": replica,
                "latest": latest,
                "history": history,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.system_sample import SystemSample  # noqa: PLC0415

        d = dict(src_dict)
        replica = d.pop("replica")

        latest = SystemSample.from_dict(d.pop("latest"))

        history = []
        _history = d.pop("history")
        for history_item_data in _history:
            history_item = SystemSample.from_dict(history_item_data)

            history.append(history_item)

        replica_system = cls(
            replica=replica,
            latest=latest,
            history=history,
        )

        replica_system.additional_properties = d
        return replica_system

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
