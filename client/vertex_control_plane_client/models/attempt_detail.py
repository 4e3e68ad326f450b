from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="AttemptDetail")


@_attrs_define
class AttemptDetail:
    """
    Attributes:
        number (int):
        reason (str):
        display_name (str):
        vertex_name (str):
        vertex_state (str):
        scheduling (str):
        region (str):
        not_before (datetime.datetime | None):
        submitted_at (datetime.datetime | None):
        started_at (datetime.datetime | None):
        ended_at (datetime.datetime | None):
        error_code (int):
        error_message (str):
        failure (str):
        resume_step (int | None):
        resume_checkpoint (str):
    """

    number: int
    reason: str
    display_name: str
    vertex_name: str
    vertex_state: str
    scheduling: str
    region: str
    not_before: datetime.datetime | None
    submitted_at: datetime.datetime | None
    started_at: datetime.datetime | None
    ended_at: datetime.datetime | None
    error_code: int
    error_message: str
    failure: str
    resume_step: int | None
    resume_checkpoint: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        number = self.number

        reason = self.reason

        display_name = self.display_name

        vertex_name = self.vertex_name

        vertex_state = self.vertex_state

        scheduling = self.scheduling

        region = self.region

        not_before: None | str
        if isinstance(self.not_before, datetime.datetime):
            not_before = self.not_before.isoformat()
        else:
            not_before = self.not_before

        submitted_at: None | str
        if isinstance(self.submitted_at, datetime.datetime):
            submitted_at = self.submitted_at.isoformat()
        else:
            submitted_at = self.submitted_at

        started_at: None | str
        if isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        ended_at: None | str
        if isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at

        error_code = self.error_code

        error_message = self.error_message

        failure = self.failure

        resume_step: int | None
        resume_step = self.resume_step

        resume_checkpoint = self.resume_checkpoint

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "number": number,
                "reason": reason,
                "display_name": display_name,
                "vertex_name": vertex_name,
                "vertex_state": vertex_state,
                "scheduling": scheduling,
                "region": region,
                "not_before": not_before,
                "submitted_at": submitted_at,
                "started_at": started_at,
                "ended_at": ended_at,
                "error_code": error_code,
                "error_message": error_message,
                "failure": failure,
                "resume_step": resume_step,
                "resume_checkpoint": resume_checkpoint,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        number = d.pop("number")

        reason = d.pop("reason")

        display_name = d.pop("display_name")

        vertex_name = d.pop("vertex_name")

        vertex_state = d.pop("vertex_state")

        scheduling = d.pop("scheduling")

        region = d.pop("region")

        def _parse_not_before(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                not_before_type_0 = datetime.datetime.fromisoformat(data)

                return not_before_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        not_before = _parse_not_before(d.pop("not_before"))

        def _parse_submitted_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                submitted_at_type_0 = datetime.datetime.fromisoformat(data)

                return submitted_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        submitted_at = _parse_submitted_at(d.pop("submitted_at"))

        def _parse_started_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        started_at = _parse_started_at(d.pop("started_at"))

        def _parse_ended_at(data: object) -> datetime.datetime | None:
            if data is None:
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ended_at_type_0 = datetime.datetime.fromisoformat(data)

                return ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None, data)

        ended_at = _parse_ended_at(d.pop("ended_at"))

        error_code = d.pop("error_code")

        error_message = d.pop("error_message")

        failure = d.pop("failure")

        def _parse_resume_step(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        resume_step = _parse_resume_step(d.pop("resume_step"))

        resume_checkpoint = d.pop("resume_checkpoint")

        attempt_detail = cls(
            number=number,
            reason=reason,
            display_name=display_name,
            vertex_name=vertex_name,
            vertex_state=vertex_state,
            scheduling=scheduling,
            region=region,
            not_before=not_before,
            submitted_at=submitted_at,
            started_at=started_at,
            ended_at=ended_at,
            error_code=error_code,
            error_message=error_message,
            failure=failure,
            resume_step=resume_step,
            resume_checkpoint=resume_checkpoint,
        )

        attempt_detail.additional_properties = d
        return attempt_detail

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
