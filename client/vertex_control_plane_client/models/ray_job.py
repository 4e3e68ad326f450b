from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="RayJob")


@_attrs_define
class RayJob:
    """
    Attributes:
        id (int):
        team (str):
        cluster (int):
        job (int | None): The Ray job's own job (kind ray): its steps, events, checkpoints and searchable logs under
            /api/v1/jobs/<job>/, and its page /jobs/<job>/.
        entrypoint (Any):
        env_vars (Any):
        entrypoint_num_cpus (float | None):
        state (str):
        message (str):
        submission_id (str):
        summary (Any):
        stop_requested (bool):
        created_at (datetime.datetime):
        started_at (datetime.datetime | None):
        ended_at (datetime.datetime | None):
    """

    id: int
    team: str
    cluster: int
    job: int | None
    entrypoint: Any
    env_vars: Any
    entrypoint_num_cpus: float | None
    state: str
    message: str
    submission_id: str
    summary: Any
    stop_requested: bool
    created_at: datetime.datetime
    started_at: datetime.datetime | None
    ended_at: datetime.datetime | None
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        team = self.team

        cluster = self.cluster

        job: int | None
        job = self.job

        entrypoint = self.entrypoint

        env_vars = self.env_vars

        entrypoint_num_cpus: float | None
        entrypoint_num_cpus = self.entrypoint_num_cpus

        state = self.state

        message = self.message

        submission_id = self.submission_id

        summary = self.summary

        stop_requested = self.stop_requested

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

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "team": team,
                "cluster": cluster,
                "job": job,
                "entrypoint": entrypoint,
                "env_vars": env_vars,
                "entrypoint_num_cpus": entrypoint_num_cpus,
                "state": state,
                "message": message,
                "submission_id": submission_id,
                "summary": summary,
                "stop_requested": stop_requested,
                "created_at": created_at,
                "started_at": started_at,
                "ended_at": ended_at,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        id = d.pop("id")

        team = d.pop("team")

        cluster = d.pop("cluster")

        def _parse_job(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        job = _parse_job(d.pop("job"))

        entrypoint = d.pop("entrypoint")

        env_vars = d.pop("env_vars")

        def _parse_entrypoint_num_cpus(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        entrypoint_num_cpus = _parse_entrypoint_num_cpus(d.pop("entrypoint_num_cpus"))

        state = d.pop("state")

        message = d.pop("message")

        submission_id = d.pop("submission_id")

        summary = d.pop("summary")

        stop_requested = d.pop("stop_requested")

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

        ray_job = cls(
            id=id,
            team=team,
            cluster=cluster,
            job=job,
            entrypoint=entrypoint,
            env_vars=env_vars,
            entrypoint_num_cpus=entrypoint_num_cpus,
            state=state,
            message=message,
            submission_id=submission_id,
            summary=summary,
            stop_requested=stop_requested,
            created_at=created_at,
            started_at=started_at,
            ended_at=ended_at,
        )

        ray_job.additional_properties = d
        return ray_job

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
