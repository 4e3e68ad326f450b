from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.health_enum import HealthEnum
from ..models.job_kind_enum import JobKindEnum
from ..models.state_enum import StateEnum

if TYPE_CHECKING:
    from ..models.attempt import Attempt
    from ..models.job_checkpoints_item import JobCheckpointsItem
    from ..models.job_cost_type_0 import JobCostType0
    from ..models.job_diagnosis_type_0 import JobDiagnosisType0
    from ..models.job_links import JobLinks
    from ..models.job_origin_type_0 import JobOriginType0
    from ..models.job_tracking import JobTracking


T = TypeVar("T", bound="Job")


@_attrs_define
class Job:
    """
    Attributes:
        id (int):
        url (str):
        team (str):
        name (str):
        kind (JobKindEnum): * `job` - Job
            * `trial` - Trial
            * `ray` - Ray
        origin (JobOriginType0 | None): For a sweep's trial or a Ray job (kind trial or ray): what it is part of, kind,
            label, url (its page) and api (its API record); null for a job.
        tags (Any):
        note (str):
        state (StateEnum): * `QUEUED_LOCAL` - queued here
            * `QUEUED` - Queued
            * `WAITING_FOR_QUOTA` - waiting for quota
            * `PENDING` - Pending
            * `RUNNING` - Running
            * `CANCELLING` - Cancelling
            * `SUCCEEDED` - Succeeded
            * `FAILED` - Failed
            * `CANCELLED` - Cancelled
        state_changed_at (datetime.datetime):
        error_message (str):
        health (HealthEnum): * `ok` - Ok
            * `suspected_hang` - suspected hang
            * `straggler` - Straggler
        health_detail (Any): Its figures: silent_s, threshold_s, p95_s and why for a suspected hang; ranks, slowdown
            (rank -> times the median) and why for a straggler.
        diagnosis (JobDiagnosisType0 | None): A failed job's most telling failure, from its log and CustomJob.error:
            kind, title, summary (the line that gave it away), fix, last_frame, replica, attempt; null unless the job
            FAILED.
        quota_wait (Any):
        checkpoints (list[JobCheckpointsItem]): The checkpoints that still exist (rotation's deletions left out), newest
            first: step, path, attempt, saved_at. A resubmission may start from these.
        links (JobLinks): Where to look at the job beside this product, by name: console (the Vertex console page), logs
            (Logs Explorer with the job's filter), errors (Error Reporting), gpu_utilisation and gpu_memory (Cloud
            Monitoring), tensorboard (when the job writes to one), experiment and experiment_run (Vertex Experiments, when
            the job names them). Against the local emulator they are this product's own pages. Empty before Vertex has given
            the job an id.
        tracking (JobTracking): Where the trainer said the run is tracked besides this product, from its `tracking`
            events: provider (wandb, vertex_experiments, tensorboard) -> an http(s) URL.
        attempt (int):
        restarts (int):
        created_by (str):
        created_at (datetime.datetime):
        started_at (datetime.datetime | None):
        ended_at (datetime.datetime | None):
        last_step (int | None):
        total_steps (int | None):
        last_loss (float | None):
        region (str):
        request (Any):
        custom_job (Any):
        attempts (list[Attempt]):
        cost (JobCostType0 | None): Integer micro-dollars: billed so far (final once ended), lost to preemptions, the
            estimate, per attempt, line and preemption.
    """

    id: int
    url: str
    team: str
    name: str
    kind: JobKindEnum
    origin: JobOriginType0 | None
    tags: Any
    note: str
    state: StateEnum
    state_changed_at: datetime.datetime
    error_message: str
    health: HealthEnum
    health_detail: Any
    diagnosis: JobDiagnosisType0 | None
    quota_wait: Any
    checkpoints: list[JobCheckpointsItem]
    links: JobLinks
    tracking: JobTracking
    attempt: int
    restarts: int
    created_by: str
    created_at: datetime.datetime
    started_at: datetime.datetime | None
    ended_at: datetime.datetime | None
    last_step: int | None
    total_steps: int | None
    last_loss: float | None
    region: str
    request: Any
    custom_job: Any
    attempts: list[Attempt]
    cost: JobCostType0 | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.job_cost_type_0 import JobCostType0  # noqa: PLC0415
        from ..models.job_diagnosis_type_0 import JobDiagnosisType0  # noqa: PLC0415
        from ..models.job_origin_type_0 import JobOriginType0  # noqa: PLC0415

        id = self.id

        url = self.url

        team = self.team

        name = self.name

        kind = self.kind.value

        origin: dict[str, Any] | None
        if isinstance(self.origin, JobOriginType0):
            origin = self.origin.to_dict()
        else:
            origin = self.origin

        tags = self.tags

        note = self.note

        state = self.state.value

        state_changed_at = self.state_changed_at.isoformat()

        error_message = self.error_message

        health = self.health.value

        health_detail = self.health_detail

        diagnosis: dict[str, Any] | None
        if isinstance(self.diagnosis, JobDiagnosisType0):
            diagnosis = self.diagnosis.to_dict()
        else:
            diagnosis = self.diagnosis

        quota_wait = self.quota_wait

        checkpoints = []
        for checkpoints_item_data in self.checkpoints:
            checkpoints_item = checkpoints_item_data.to_dict()
            checkpoints.append(checkpoints_item)

        links = self.links.to_dict()

        tracking = self.tracking.to_dict()

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

        region = self.region

        request = self.request

        custom_job = self.custom_job

        attempts = []
        for attempts_item_data in self.attempts:
            attempts_item = attempts_item_data.to_dict()
            attempts.append(attempts_item)

        cost: dict[str, Any] | None
        if isinstance(self.cost, JobCostType0):
            cost = self.cost.to_dict()
        else:
            cost = self.cost

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "url": url,
                "team": team,
                "name": name,
                "kind": kind,
                "origin": origin,
                "tags": tags,
                "note": note,
                "state": state,
                "state_changed_at": state_changed_at,
                "error_message": error_message,
                "health": health,
                "health_detail": health_detail,
                "diagnosis": diagnosis,
                "quota_wait": quota_wait,
                "checkpoints": checkpoints,
                "links": links,
                "tracking": tracking,
                "attempt": attempt,
                "restarts": restarts,
                "created_by": created_by,
                "created_at": created_at,
                "started_at": started_at,
                "ended_at": ended_at,
                "last_step": last_step,
                "total_steps": total_steps,
                "last_loss": last_loss,
                "region": region,
                "request": request,
                "custom_job": custom_job,
                "attempts": attempts,
                "cost": cost,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.attempt import Attempt  # noqa: PLC0415
        from ..models.job_checkpoints_item import JobCheckpointsItem  # noqa: PLC0415
        from ..models.job_cost_type_0 import JobCostType0  # noqa: PLC0415
        from ..models.job_diagnosis_type_0 import JobDiagnosisType0  # noqa: PLC0415
        from ..models.job_links import JobLinks  # noqa: PLC0415
        from ..models.job_origin_type_0 import JobOriginType0  # noqa: PLC0415
        from ..models.job_tracking import JobTracking  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        url = d.pop("url")

        team = d.pop("team")

        name = d.pop("name")

        kind = JobKindEnum(d.pop("kind"))

        def _parse_origin(data: object) -> JobOriginType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                origin_type_0 = JobOriginType0.from_dict(data)

                return origin_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobOriginType0 | None, data)

        origin = _parse_origin(d.pop("origin"))

        tags = d.pop("tags")

        note = d.pop("note")

        state = StateEnum(d.pop("state"))

        state_changed_at = datetime.datetime.fromisoformat(d.pop("state_changed_at"))

        error_message = d.pop("error_message")

        health = HealthEnum(d.pop("health"))

        health_detail = d.pop("health_detail")

        def _parse_diagnosis(data: object) -> JobDiagnosisType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                diagnosis_type_0 = JobDiagnosisType0.from_dict(data)

                return diagnosis_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobDiagnosisType0 | None, data)

        diagnosis = _parse_diagnosis(d.pop("diagnosis"))

        quota_wait = d.pop("quota_wait")

        checkpoints = []
        _checkpoints = d.pop("checkpoints")
        for checkpoints_item_data in _checkpoints:
            checkpoints_item = JobCheckpointsItem.from_dict(checkpoints_item_data)

            checkpoints.append(checkpoints_item)

        links = JobLinks.from_dict(d.pop("links"))

        tracking = JobTracking.from_dict(d.pop("tracking"))

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

        region = d.pop("region")

        request = d.pop("request")

        custom_job = d.pop("custom_job")

        attempts = []
        _attempts = d.pop("attempts")
        for attempts_item_data in _attempts:
            attempts_item = Attempt.from_dict(attempts_item_data)

            attempts.append(attempts_item)

        def _parse_cost(data: object) -> JobCostType0 | None:
            if data is None:
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                cost_type_0 = JobCostType0.from_dict(data)

                return cost_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(JobCostType0 | None, data)

        cost = _parse_cost(d.pop("cost"))

        job = cls(
            id=id,
            url=url,
            team=team,
            name=name,
            kind=kind,
            origin=origin,
            tags=tags,
            note=note,
            state=state,
            state_changed_at=state_changed_at,
            error_message=error_message,
            health=health,
            health_detail=health_detail,
            diagnosis=diagnosis,
            quota_wait=quota_wait,
            checkpoints=checkpoints,
            links=links,
            tracking=tracking,
            attempt=attempt,
            restarts=restarts,
            created_by=created_by,
            created_at=created_at,
            started_at=started_at,
            ended_at=ended_at,
            last_step=last_step,
            total_steps=total_steps,
            last_loss=last_loss,
            region=region,
            request=request,
            custom_job=custom_job,
            attempts=attempts,
            cost=cost,
        )

        job.additional_properties = d
        return job

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
