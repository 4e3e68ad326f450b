from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Tracking")


@_attrs_define
class Tracking:
    """
    Attributes:
        wandb_api_key_set (bool):
        wandb_entity (str | Unset): The W&B entity (user or team) the team's jobs log runs under.
        wandb_project (str | Unset): The W&B project; empty: the team's jobs do not log to W&B.
    """

    wandb_api_key_set: bool
    wandb_entity: str | Unset = UNSET
    wandb_project: str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        wandb_api_key_set = self.wandb_api_key_set

        wandb_entity = self.wandb_entity

        wandb_project = self.wandb_project

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "wandb_api_key_set": wandb_api_key_set,
            }
        )
        if wandb_entity is not UNSET:
            field_dict["wandb_entity"] = wandb_entity
        if wandb_project is not UNSET:
            field_dict["wandb_project"] = wandb_project

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        d = dict(src_dict)
        wandb_api_key_set = d.pop("wandb_api_key_set")

        wandb_entity = d.pop("wandb_entity", UNSET)

        wandb_project = d.pop("wandb_project", UNSET)

        tracking = cls(
            wandb_api_key_set=wandb_api_key_set,
            wandb_entity=wandb_entity,
            wandb_project=wandb_project,
        )

        tracking.additional_properties = d
        return tracking

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
