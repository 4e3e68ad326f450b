from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.replica_system import ReplicaSystem


T = TypeVar("T", bound="JobSystem")


@_attrs_define
class JobSystem:
    """
    Attributes:
        job (int):
        vertex_job_id (str): the CustomJob whose series these are
        minutes (int):
        start (datetime.datetime):
        end (datetime.datetime):
        replicas (list[ReplicaSystem]):
        note (str): why there are no replicas, when there are none
    """

    job: int
    vertex_job_id: str
    minutes: int
    start: datetime.datetime
    end: datetime.datetime
    replicas: list[ReplicaSystem]
    note: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        job = self.job

        vertex_job_id = self.vertex_job_id

        minutes = self.minutes

        start = self.start.isoformat()

        end = self.end.isoformat()

        replicas = []
        for replicas_item_data in self.replicas:
            replicas_item = replicas_item_data.to_dict()
            replicas.append(replicas_item)

        note = self.note

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "job": job,
                "vertex_job_id": vertex_job_id,
                "minutes": minutes,
                "start": start,
                "end": end,
                "replicas": replicas,
                "note": note,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.replica_system import ReplicaSystem  # noqa: PLC0415

        d = dict(src_dict)
        job = d.pop("job")

        vertex_job_id = d.pop("vertex_job_id")

        minutes = d.pop("minutes")

        start = datetime.datetime.fromisoformat(d.pop("start"))

        end = datetime.datetime.fromisoformat(d.pop("end"))

        replicas = []
        _replicas = d.pop("replicas")
        for replicas_item_data in _replicas:
            replicas_item = ReplicaSystem.from_dict(replicas_item_data)

            replicas.append(replicas_item)

        note = d.pop("note")

        job_system = cls(
            job=job,
            vertex_job_id=vertex_job_id,
            minutes=minutes,
            start=start,
            end=end,
            replicas=replicas,
            note=note,
        )

        job_system.additional_properties = d
        return job_system

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
