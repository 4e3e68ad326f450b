from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.sweep_state_enum import SweepStateEnum
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.sweep_links import SweepLinks
    from ..models.sweep_trials_item import SweepTrialsItem


T = TypeVar("T", bound="Sweep")


@_attrs_define
class Sweep:
    """
    Attributes:
        id (int):
        name (str):
        team (str):
        metric_id (str):
        goal (str):
        max_trial_count (int | None):
        parallel_trial_count (int | None):
        region (str):
        request (Any):
        tuning_job (Any):
        best_trial (None | str):
        trials (list[SweepTrialsItem]):
        links (SweepLinks): key -> URL: the tuning job in the Vertex console (the sweep's page against the emulator)
        state (SweepStateEnum | Unset): * `QUEUED` - Queued
            * `PENDING` - Pending
            * `RUNNING` - Running
            * `CANCELLING` - Cancelling
            * `SUCCEEDED` - Succeeded
            * `FAILED` - Failed
            * `CANCELLED` - Cancelled
        created_at (datetime.datetime | Unset):
        started_at (datetime.datetime | None | Unset):
        ended_at (datetime.datetime | None | Unset):
        estimate_micros (int | None | Unset):
        cost_micros (int | Unset):
        error_message (str | Unset):
        vertex_name (str | Unset):
        vertex_state (str | Unset):
        estimate_trial_hours (None | str | Unset):
        trial_hourly_micros (int | None | Unset):
    """

    id: int
    name: str
    team: str
    metric_id: str
    goal: str
    max_trial_count: int | None
    parallel_trial_count: int | None
    region: str
    request: Any
    tuning_job: Any
    best_trial: None | str
    trials: list[SweepTrialsItem]
    links: SweepLinks
    state: SweepStateEnum | Unset = UNSET
    created_at: datetime.datetime | Unset = UNSET
    started_at: datetime.datetime | None | Unset = UNSET
    ended_at: datetime.datetime | None | Unset = UNSET
    estimate_micros: int | None | Unset = UNSET
    cost_micros: int | Unset = UNSET
    error_message: str | Unset = UNSET
    vertex_name: str | Unset = UNSET
    vertex_state: str | Unset = UNSET
    estimate_trial_hours: None | str | Unset = UNSET
    trial_hourly_micros: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        id = self.id

        name = self.name

        team = self.team

        metric_id = self.metric_id

        goal = self.goal

        max_trial_count: int | None
        max_trial_count = self.max_trial_count

        parallel_trial_count: int | None
        parallel_trial_count = self.parallel_trial_count

        region = self.region

        request = self.request

        tuning_job = self.tuning_job

        best_trial: None | str
        best_trial = self.best_trial

        trials = []
        for trials_item_data in self.trials:
            trials_item = trials_item_data.to_dict()
            trials.append(trials_item)

        links = self.links.to_dict()

        state: str | Unset = UNSET
        if not isinstance(self.state, Unset):
            state = self.state.value

        created_at: str | Unset = UNSET
        if not isinstance(self.created_at, Unset):
            created_at = self.created_at.isoformat()

        started_at: None | str | Unset
        if isinstance(self.started_at, Unset):
            started_at = UNSET
        elif isinstance(self.started_at, datetime.datetime):
            started_at = self.started_at.isoformat()
        else:
            started_at = self.started_at

        ended_at: None | str | Unset
        if isinstance(self.ended_at, Unset):
            ended_at = UNSET
        elif isinstance(self.ended_at, datetime.datetime):
            ended_at = self.ended_at.isoformat()
        else:
            ended_at = self.ended_at

        estimate_micros: int | None | Unset
        if isinstance(self.estimate_micros, Unset):
            estimate_micros = UNSET
        else:
            estimate_micros = self.estimate_micros

        cost_micros = self.cost_micros

        error_message = self.error_message

        vertex_name = self.vertex_name

        vertex_state = self.vertex_state

        estimate_trial_hours: None | str | Unset
        if isinstance(self.estimate_trial_hours, Unset):
            estimate_trial_hours = UNSET
        else:
            estimate_trial_hours = self.estimate_trial_hours

        trial_hourly_micros: int | None | Unset
        if isinstance(self.trial_hourly_micros, Unset):
            trial_hourly_micros = UNSET
        else:
            trial_hourly_micros = self.trial_hourly_micros

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "id": id,
                "name": name,
                "team": team,
                "metric_id": metric_id,
                "goal": goal,
                "max_trial_count": max_trial_count,
                "parallel_trial_count": parallel_trial_count,
                "region": region,
                "request": request,
                "tuning_job": tuning_job,
                "best_trial": best_trial,
                "trials": trials,
                "links": links,
            }
        )
        if state is not UNSET:
            field_dict["state"] = state
        if created_at is not UNSET:
            field_dict["created_at"] = created_at
        if started_at is not UNSET:
            field_dict["started_at"] = started_at
        if ended_at is not UNSET:
            field_dict["ended_at"] = ended_at
        if estimate_micros is not UNSET:
            field_dict["estimate_micros"] = estimate_micros
        if cost_micros is not UNSET:
            field_dict["cost_micros"] = cost_micros
        if error_message is not UNSET:
            field_dict["error_message"] = error_message
        if vertex_name is not UNSET:
            field_dict["vertex_name"] = vertex_name
        if vertex_state is not UNSET:
            field_dict["vertex_state"] = vertex_state
        if estimate_trial_hours is not UNSET:
            field_dict["estimate_trial_hours"] = estimate_trial_hours
        if trial_hourly_micros is not UNSET:
            field_dict["trial_hourly_micros"] = trial_hourly_micros

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.sweep_links import SweepLinks  # noqa: PLC0415
        from ..models.sweep_trials_item import SweepTrialsItem  # noqa: PLC0415

        d = dict(src_dict)
        id = d.pop("id")

        name = d.pop("name")

        team = d.pop("team")

        metric_id = d.pop("metric_id")

        goal = d.pop("goal")

        def _parse_max_trial_count(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        max_trial_count = _parse_max_trial_count(d.pop("max_trial_count"))

        def _parse_parallel_trial_count(data: object) -> int | None:
            if data is None:
                return data
            return cast(int | None, data)

        parallel_trial_count = _parse_parallel_trial_count(d.pop("parallel_trial_count"))

        region = d.pop("region")

        request = d.pop("request")

        tuning_job = d.pop("tuning_job")

        def _parse_best_trial(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        best_trial = _parse_best_trial(d.pop("best_trial"))

        trials = []
        _trials = d.pop("trials")
        for trials_item_data in _trials:
            trials_item = SweepTrialsItem.from_dict(trials_item_data)

            trials.append(trials_item)

        links = SweepLinks.from_dict(d.pop("links"))

        _state = d.pop("state", UNSET)
        state: SweepStateEnum | Unset
        if isinstance(_state, Unset):
            state = UNSET
        else:
            state = SweepStateEnum(_state)

        _created_at = d.pop("created_at", UNSET)
        created_at: datetime.datetime | Unset
        if isinstance(_created_at, Unset):
            created_at = UNSET
        else:
            created_at = datetime.datetime.fromisoformat(_created_at)

        def _parse_started_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                started_at_type_0 = datetime.datetime.fromisoformat(data)

                return started_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        started_at = _parse_started_at(d.pop("started_at", UNSET))

        def _parse_ended_at(data: object) -> datetime.datetime | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                ended_at_type_0 = datetime.datetime.fromisoformat(data)

                return ended_at_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(datetime.datetime | None | Unset, data)

        ended_at = _parse_ended_at(d.pop("ended_at", UNSET))

        def _parse_estimate_micros(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        estimate_micros = _parse_estimate_micros(d.pop("estimate_micros", UNSET))

        cost_micros = d.pop("cost_micros", UNSET)

        error_message = d.pop("error_message", UNSET)

        vertex_name = d.pop("vertex_name", UNSET)

        vertex_state = d.pop("vertex_state", UNSET)

        def _parse_estimate_trial_hours(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        estimate_trial_hours = _parse_estimate_trial_hours(d.pop("estimate_trial_hours", UNSET))

        def _parse_trial_hourly_micros(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        trial_hourly_micros = _parse_trial_hourly_micros(d.pop("trial_hourly_micros", UNSET))

        sweep = cls(
            id=id,
            name=name,
            team=team,
            metric_id=metric_id,
            goal=goal,
            max_trial_count=max_trial_count,
            parallel_trial_count=parallel_trial_count,
            region=region,
            request=request,
            tuning_job=tuning_job,
            best_trial=best_trial,
            trials=trials,
            links=links,
            state=state,
            created_at=created_at,
            started_at=started_at,
            ended_at=ended_at,
            estimate_micros=estimate_micros,
            cost_micros=cost_micros,
            error_message=error_message,
            vertex_name=vertex_name,
            vertex_state=vertex_state,
            estimate_trial_hours=estimate_trial_hours,
            trial_hourly_micros=trial_hourly_micros,
        )

        sweep.additional_properties = d
        return sweep

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
