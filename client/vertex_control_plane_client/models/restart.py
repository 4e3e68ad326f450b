from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.cause_enum import CauseEnum

T = TypeVar("T", bound="Restart")


@_attrs_define
class Restart:
    """
    Attributes:
        attempt (int):
        replica (str):
        ordinal (int):
        cause (CauseEnum): * `preemption` - spot preemption
            * `stockout` - stockout
            * `crash` - replica exited with an error
            * `backend` - the backend restarted
            * `hang` - suspected hang
            * `restart` - restart
        signal (str):
        occurred_at (datetime.datetime):
        detected_at (datetime.datetime):
        step (int | None):
        checkpoint_path (str):
        resumed_at (datetime.datetime | None):
        resumed_from_step (int | None):
        resumed_from_path (str):
        checkpoint_step (int | None):
        steps_lost (int | None):
        sources (Any):
    """

    attempt: int
    replica: str
    ordinal: int
    cause: CauseEnum
    signal: str
    occurred_at: datetime.datetime
    detected_at: datetime.datetime
    step: int | None
    checkpoint_path: str
    resumed_at: datetime.datetime | None
    resumed_from_step: int | None
    resumed_from_path: str
    checkpoint_step: int | None
    steps_lost: int | None
    sources: Any
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempt = self.attempt

        replica = self.replica

        ordinal = self.ordinal

        cause = self.cause.value

        signal = self.signal

        occurred_at = self.occurred_at.isoformat()

        detected_at = self.detected_at.isoformat()

        step: int | None
        step = self.step

        checkpoint_path = self.checkpoint_path

        resumed_at: None | str
        if isinstance(self.resumed_at, datetime.datetime):
            resumed_at = self.resumed_at.isoformat()
        else:
            resumed_at = self.resumed_at

        resumed_from_step: int | None
        resumed_from_step = self.resumed_from_step

        resumed_from_path = self.resumed_from_path

        checkpoint_step: int | None
        checkpoint_step = self.checkpoint_step

        steps_lost: int | None
        steps_lost = self.steps_lost

        sources = self.sources

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempt": attempt,
                "replica": replica,
                "ordinal": ordinal,
                "cause": cause,
                "signal": signal,
                "occurred_at": occurred_at,
                "detected_at": detected_at,
                "step": step,
                "checkpoint_path": checkpoint_path,
                "resumed_at": resumed_at,
                "resumed_from_step": resumed_from_step,
                "resumed_from_path": resumed_from_path,
                "checkpoint_step": checkpoint_step,
                "steps_lost": steps_lost,
                "sources": sources,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        attempt = d.pop("attempt")

        replica = d.pop("replica")

        ordinal = d.pop("ordinal")

        cause = CauseEnum(d.pop("cause"))

        signal = d.pop("signal")

        occurred_at = datetime.datetime.fromisoformat(d.pop("occurred_at"))

        detected_at = datetime.datetime.fromisoformat(d.pop("detected_at"))

        def _parse_step(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        step = _parse_step(d.pop("step"))

        checkpoint_path = d.pop("checkpoint_path")

        def _parse_resumed_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                resumed_at_type_0 = datetime.datetime.fromisoformat(data)

                return resumed_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        resumed_at = _parse_resumed_at(d.pop("resumed_at"))

        def _parse_resumed_from_step(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        resumed_from_step = _parse_resumed_from_step(d.pop("resumed_from_step"))

        resumed_from_path = d.pop("resumed_from_path")

        def _parse_checkpoint_step(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        checkpoint_step = _parse_checkpoint_step(d.pop("checkpoint_step"))

        def _parse_steps_lost(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        steps_lost = _parse_steps_lost(d.pop("steps_lost"))

        sources = d.pop("sources")

        restart = cls(
            attempt=attempt,
            replica=replica,
            ordinal=ordinal,
            cause=cause,
            signal=signal,
            occurred_at=occurred_at,
            detected_at=detected_at,
            step=step,
            checkpoint_path=checkpoint_path,
            resumed_at=resumed_at,
            resumed_from_step=resumed_from_step,
            resumed_from_path=resumed_from_path,
            checkpoint_step=checkpoint_step,
            steps_lost=steps_lost,
            sources=sources,
        )

        restart.additional_properties = d
        return restart

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
