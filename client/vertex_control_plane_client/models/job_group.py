from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.group_job import GroupJob
    from ..models.job_group_states import JobGroupStates


T = TypeVar("T", bound="JobGroup")


@_attrs_define
class JobGroup:
    """One group of the job list (controlplane/runs/groups.py); money in integer micro-dollars.

    Attributes:
        value (None | str): The group's value of the key, as text; null for the jobs without the key.
        jobs (int): How many jobs the group holds.
        states (JobGroupStates): Its jobs by state (states with none left out).
        best_loss (float | None): The lowest last loss of its jobs.
        mean_loss (float | None): The mean last loss of its jobs that have one.
        cost_micros (int): Billed so far, all its jobs.
        lost_micros (int): Of which lost to preemptions.
        running_seconds (int): Its jobs' running time added up: started to ended (or now).
        accelerator_hours (float): Its jobs' accelerator-hours (GPU-hours; TPU chips count as GPUs do): each job's
            accelerators per replica x replicas, every worker pool, x its running time; 0 for CPU jobs.
        newest (list[GroupJob]): Its newest jobs (at most 8).
        jobs_url (None | str): The job list of the group (the request's filters and the group's); null where the list's
            filters cannot name it: the jobs without the key, or a filter of the same name already asked for.
        compare_url (str): The Compare page of its newest jobs.
    """

    value: None | str
    jobs: int
    states: JobGroupStates
    best_loss: float | None
    mean_loss: float | None
    cost_micros: int
    lost_micros: int
    running_seconds: int
    accelerator_hours: float
    newest: list[GroupJob]
    jobs_url: None | str
    compare_url: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        value: None | str
        value = self.value

        jobs = self.jobs

        states = self.states.to_dict()

        best_loss: float | None
        best_loss = self.best_loss

        mean_loss: float | None
        mean_loss = self.mean_loss

        cost_micros = self.cost_micros

        lost_micros = self.lost_micros

        running_seconds = self.running_seconds

        accelerator_hours = self.accelerator_hours

        newest = []
        for newest_item_data in self.newest:
            newest_item = newest_item_data.to_dict()
            newest.append(newest_item)

        jobs_url: None | str
        jobs_url = self.jobs_url

        compare_url = self.compare_url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "value": value,
                "jobs": jobs,
                "states": states,
                "best_loss": best_loss,
                "mean_loss": mean_loss,
                "cost_micros": cost_micros,
                "lost_micros": lost_micros,
                "running_seconds": running_seconds,
                "accelerator_hours": accelerator_hours,
                "newest": newest,
                "jobs_url": jobs_url,
                "compare_url": compare_url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.group_job import GroupJob  # noqa: PLC0415
        from ..models.job_group_states import JobGroupStates  # noqa: PLC0415

        d = dict(src_dict)

        def _parse_value(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        value = _parse_value(d.pop("value"))

        jobs = d.pop("jobs")

        states = JobGroupStates.from_dict(d.pop("states"))

        def _parse_best_loss(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        best_loss = _parse_best_loss(d.pop("best_loss"))

        def _parse_mean_loss(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        mean_loss = _parse_mean_loss(d.pop("mean_loss"))

        cost_micros = d.pop("cost_micros")

        lost_micros = d.pop("lost_micros")

        running_seconds = d.pop("running_seconds")

        accelerator_hours = d.pop("accelerator_hours")

        newest = []
        _newest = d.pop("newest")
        for newest_item_data in _newest:
            newest_item = GroupJob.from_dict(newest_item_data)

            newest.append(newest_item)

        def _parse_jobs_url(data: object) -> None | str:
            if data is None:
                return data
            return cast(None | str, data)

        jobs_url = _parse_jobs_url(d.pop("jobs_url"))

        compare_url = d.pop("compare_url")

        job_group = cls(
            value=value,
            jobs=jobs,
            states=states,
            best_loss=best_loss,
            mean_loss=mean_loss,
            cost_micros=cost_micros,
            lost_micros=lost_micros,
            running_seconds=running_seconds,
            accelerator_hours=accelerator_hours,
            newest=newest,
            jobs_url=jobs_url,
            compare_url=compare_url,
        )

        job_group.additional_properties = d
        return job_group

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
