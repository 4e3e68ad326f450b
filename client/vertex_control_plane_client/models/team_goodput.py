from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.category import Category
    from ..models.idle_resource import IdleResource
    from ..models.job_line import JobLine


T = TypeVar("T", bound="TeamGoodput")


@_attrs_define
class TeamGoodput:
    """
    Attributes:
        team (str):
        month (str):
        jobs (int):
        billed_accelerator_seconds (float):
        goodput (float | None):
        categories (list[Category]):
        top_badput (list[Category]):
        by_job (list[JobLine]):
        idle_resources (list[IdleResource]): the persistent resources idle in the month: their sum is the category idle
    """

    team: str
    month: str
    jobs: int
    billed_accelerator_seconds: float
    goodput: float | None
    categories: list[Category]
    top_badput: list[Category]
    by_job: list[JobLine]
    idle_resources: list[IdleResource]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        team = self.team

        month = self.month

        jobs = self.jobs

        billed_accelerator_seconds = self.billed_accelerator_seconds

        goodput: float | None
        goodput = self.goodput

        categories = []
        for categories_item_data in self.categories:
            categories_item = categories_item_data.to_dict()
            categories.append(categories_item)

        top_badput = []
        for top_badput_item_data in self.top_badput:
            top_badput_item = top_badput_item_data.to_dict()
            top_badput.append(top_badput_item)

        by_job = []
        for by_job_item_data in self.by_job:
            by_job_item = by_job_item_data.to_dict()
            by_job.append(by_job_item)

        idle_resources = []
        for idle_resources_item_data in self.idle_resources:
            idle_resources_item = idle_resources_item_data.to_dict()
            idle_resources.append(idle_resources_item)

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "team": team,
                "month": month,
                "jobs": jobs,
                "billed_accelerator_seconds": billed_accelerator_seconds,
                "goodput": goodput,
                "categories": categories,
                "top_badput": top_badput,
                "by_job": by_job,
                "idle_resources": idle_resources,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.category import Category  # noqa: PLC0415
        from ..models.idle_resource import IdleResource  # noqa: PLC0415
        from ..models.job_line import JobLine  # noqa: PLC0415

        d = dict(src_dict)
        team = d.pop("team")

        month = d.pop("month")

        jobs = d.pop("jobs")

        billed_accelerator_seconds = d.pop("billed_accelerator_seconds")

        def _parse_goodput(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        goodput = _parse_goodput(d.pop("goodput"))

        categories = []
        _categories = d.pop("categories")
        for categories_item_data in _categories:
            categories_item = Category.from_dict(categories_item_data)

            categories.append(categories_item)

        top_badput = []
        _top_badput = d.pop("top_badput")
        for top_badput_item_data in _top_badput:
            top_badput_item = Category.from_dict(top_badput_item_data)

            top_badput.append(top_badput_item)

        by_job = []
        _by_job = d.pop("by_job")
        for by_job_item_data in _by_job:
            by_job_item = JobLine.from_dict(by_job_item_data)

            by_job.append(by_job_item)

        idle_resources = []
        _idle_resources = d.pop("idle_resources")
        for idle_resources_item_data in _idle_resources:
            idle_resources_item = IdleResource.from_dict(idle_resources_item_data)

            idle_resources.append(idle_resources_item)

        team_goodput = cls(
            team=team,
            month=month,
            jobs=jobs,
            billed_accelerator_seconds=billed_accelerator_seconds,
            goodput=goodput,
            categories=categories,
            top_badput=top_badput,
            by_job=by_job,
            idle_resources=idle_resources,
        )

        team_goodput.additional_properties = d
        return team_goodput

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
