from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.job_kind_enum import JobKindEnum
from ..models.state_enum import StateEnum

if TYPE_CHECKING:
    from ..models.job_list_diagnosis_type_0 import JobListDiagnosisType0


T = TypeVar("T", bound="JobList")


@_attrs_define
class JobList:
    """A row of the job list: a job's state, progress and cost, without its request and
    CustomJob (read those from the job's own record).

        Attributes:
            id (int):
            url (str):
            team (str):
            name (str):
            kind (JobKindEnum): * `job` - Job
                * `trial` - Trial
                * `ray` - Ray
            tags (Any):
            state (StateEnum): * `QUEUED_LOCAL` - queued here
                * `QUEUED` - Queued
                * `WAITING_FOR_QUOTA` - waiting for quota
                * `PENDING` - Pending
                * `RUNNING` - Running
                * `CANCELLING` - Cancelling
                * `SUCCEEDED` - Succeeded
                * `FAILED` - Failed
                * `CANCELLED` - Cancelled
            diagnosis (JobListDiagnosisType0 | None): A failed job's most telling failure, from its log and CustomJob.error:
                kind, title, summary (the line that gave it away), fix, last_frame, replica, attempt; null unless the job
                FAILED.
            quota_wait (Any):
            attempt (int):
            restarts (int):
            created_by (str):
            created_at (datetime.datetime):
            started_at (datetime.datetime | None):
            ended_at (datetime.datetime | None):
            last_step (int | None):
            total_steps (int | None):
            last_loss (float | None):
            cost_micros (int):
            lost_micros (int):
            estimate_micros (int | None):
    """

    id: int
    url: str
    team: str
    name: str
    kind: JobKindEnum
    tags: Any
    state: StateEnum
    diagnosis: JobListDiagnosisType0 | None
    quota_wait: Any
    attempt: int
    restarts: int
    created_by: str
    created_at: datetime.datetime
    started_at: datetime.datetime | None
    ended_at: datetime.datetime | None
    last_step: int | None
    total_steps: int | None
    last_loss: float | None
    cost_micros: int
    lost_micros: int
    estimate_micros: int | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.job_list_diagnosis_type_0 import JobListDiagnosisType0  # noqa: PLC0415

        id = self.id

        url = self.url

        team = self.team

        name = self.name

        kind = self.kind.value

        tags = self.tags

        state = self.state.value

        diagnosis: dict[str, Any] | None
        if isinstance(self.diagnosis, JobListDiagnosisType0):
            diagnosis = self.diagnosis.to_dict()
        else:
            diagnosis = self.diagnosis

        quota_wait = self.quota_wait

        attempt = self.attempt

        restarts = self.restarts

        created_by = self.created_by

        created_at = self.created_at.isoformat()

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

        last_step: int | None
        last_step = self.last_step

        total_steps: int | None
        total_steps = self.total_steps

        last_loss: float | None
        last_loss = self.last_loss

        cost_micros = self.cost_micros

        lost_micros = self.lost_micros

        estimate_micros: int | None
        estimate_micros = self.estimate_micros

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "url": url,
                "team": team,
                "name": name,
                "kind": kind,
                "tags": tags,
                "state": state,
                "diagnosis": diagnosis,
                "quota_wait": quota_wait,
                "attempt": attempt,
                "restarts": restarts,
                "created_by": created_by,
                "created_at": created_at,
                "started_at": started_at,
                "ended_at": ended_at,
                "last_step": last_step,
                "total_steps": total_steps,
                "last_loss": last_loss,
                "cost_micros": cost_micros,
                "lost_micros": lost_micros,
                "estimate_micros": estimate_micros,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.job_list_diagnosis_type_0 import JobListDiagnosisType0  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        url = d.pop("url")

        team = d.pop("team")

        name = d.pop("name")

        kind = JobKindEnum(d.pop("kind"))

        tags = d.pop("tags")

        state = StateEnum(d.pop("state"))

        def _parse_diagnosis(data: object) -> JobListDiagnosisType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                diagnosis_type_0 = JobListDiagnosisType0.from_dict(data)

                return diagnosis_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobListDiagnosisType0 | None, data)

        diagnosis = _parse_diagnosis(d.pop("diagnosis"))

        quota_wait = d.pop("quota_wait")

        attempt = d.pop("attempt")

        restarts = d.pop("restarts")

        created_by = d.pop("created_by")

        created_at = datetime.datetime.fromisoformat(d.pop("created_at"))

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

        def _parse_last_step(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        last_step = _parse_last_step(d.pop("last_step"))

        def _parse_total_steps(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        total_steps = _parse_total_steps(d.pop("total_steps"))

        def _parse_last_loss(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        last_loss = _parse_last_loss(d.pop("last_loss"))

        cost_micros = d.pop("cost_micros")

        lost_micros = d.pop("lost_micros")

        def _parse_estimate_micros(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        estimate_micros = _parse_estimate_micros(d.pop("estimate_micros"))

        job_list = cls(
            id=id,
            url=url,
            team=team,
            name=name,
            kind=kind,
            tags=tags,
            state=state,
            diagnosis=diagnosis,
            quota_wait=quota_wait,
            attempt=attempt,
            restarts=restarts,
            created_by=created_by,
            created_at=created_at,
            started_at=started_at,
            ended_at=ended_at,
            last_step=last_step,
            total_steps=total_steps,
            last_loss=last_loss,
            cost_micros=cost_micros,
            lost_micros=lost_micros,
            estimate_micros=estimate_micros,
        )

        job_list.additional_properties = d
        return job_list

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
