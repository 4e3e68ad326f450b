from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.category import Category


T = TypeVar("T", bound="JobGoodput")


@_attrs_define
class JobGoodput:
    """
    Attributes:
        job (int):
        status (str): "so far" while the job runs, then "final"
        accelerators (int):
        billed_accelerator_seconds (float):
        goodput (float | None): productive over billed
        categories (list[Category]):
        replayed_steps (int):
        step_seconds (float | None):
        notes (list[str]):
    """

    job: int
    status: str
    accelerators: int
    billed_accelerator_seconds: float
    goodput: float | None
    categories: list[Category]
    replayed_steps: int
    step_seconds: float | None
    notes: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        job = self.job

        status = self.status

        accelerators = self.accelerators

        billed_accelerator_seconds = self.billed_accelerator_seconds

        goodput: float | None
        goodput = self.goodput

        categories = []
        for categories_item_data in self.categories:
            categories_item = categories_item_data.to_dict()
            categories.append(categories_item)

        replayed_steps = self.replayed_steps

        step_seconds: float | None
        step_seconds = self.step_seconds

        notes = self.notes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "job": job,
                "status": status,
                "accelerators": accelerators,
                "billed_accelerator_seconds": billed_accelerator_seconds,
                "goodput": goodput,
                "categories": categories,
                "replayed_steps": replayed_steps,
                "step_seconds": step_seconds,
                "notes": notes,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.category import Category  # noqa: PLC0415

        d = dict(src_dict)
        job = d.pop("job")

        status = d.pop("status")

        accelerators = d.pop("accelerators")

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

        replayed_steps = d.pop("replayed_steps")

        def _parse_step_seconds(data: object) -> float | None:
            if data is None:
                return data
            return cast(float | None, data)

        step_seconds = _parse_step_seconds(d.pop("step_seconds"))

        notes = cast(list[str], d.pop("notes"))

        job_goodput = cls(
            job=job,
            status=status,
            accelerators=accelerators,
            billed_accelerator_seconds=billed_accelerator_seconds,
            goodput=goodput,
            categories=categories,
            replayed_steps=replayed_steps,
            step_seconds=step_seconds,
            notes=notes,
        )

        job_goodput.additional_properties = d
        return job_goodput

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
