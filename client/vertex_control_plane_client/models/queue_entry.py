from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="QueueEntry")


@_attrs_define
class QueueEntry:
    """
    Attributes:
        id (int):
        name (str):
        team (str):
        state (str): QUEUED_LOCAL: waiting here; else on Vertex
        priority (str): low, normal or high
        place (int | None): 1 = the next to start; null unless waiting
        reason (str): why it waits
        earliest_start (datetime.datetime | None): the soonest it could start by the running jobs' timeouts (the jobs
            ahead of it may make it later); null: unknown
        borrowing (bool): holds accelerators beyond its team's guarantee (may be stopped at a checkpoint for another
            team's guarantee)
        accelerators (str):
    """

    id: int
    name: str
    team: str
    state: str
    priority: str
    place: int | None
    reason: str
    earliest_start: datetime.datetime | None
    borrowing: bool
    accelerators: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        name = self.name

        team = self.team

        state = self.state

        priority = self.priority

        place: int | None
        place = self.place

        reason = self.reason

        earliest_start: None | str
        if isinstance(self.earliest_start, datetime.datetime):
            earliest_start = self.earliest_start.isoformat()
        else:
            earliest_start = self.earliest_start

        borrowing = self.borrowing

        accelerators = self.accelerators

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "team": team,
                "state": state,
                "priority": priority,
                "place": place,
                "reason": reason,
                "earliest_start": earliest_start,
                "borrowing": borrowing,
                "accelerators": accelerators,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        name = d.pop("name")

        team = d.pop("team")

        state = d.pop("state")

        priority = d.pop("priority")

        def _parse_place(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        place = _parse_place(d.pop("place"))

        reason = d.pop("reason")

        def _parse_earliest_start(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                earliest_start_type_0 = datetime.datetime.fromisoformat(data)

                return earliest_start_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        earliest_start = _parse_earliest_start(d.pop("earliest_start"))

        borrowing = d.pop("borrowing")

        accelerators = d.pop("accelerators")

        queue_entry = cls(
            id=id,
            name=name,
            team=team,
            state=state,
            priority=priority,
            place=place,
            reason=reason,
            earliest_start=earliest_start,
            borrowing=borrowing,
            accelerators=accelerators,
        )

        queue_entry.additional_properties = d
        return queue_entry

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
