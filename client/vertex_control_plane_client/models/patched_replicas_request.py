from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.patched_replicas_request_replicas import PatchedReplicasRequestReplicas


T = TypeVar("T", bound="PatchedReplicasRequest")


@_attrs_define
class PatchedReplicasRequest:
    """Refuses keys it does not know, so a typo is an error instead of a silent default.

    Attributes:
        replicas (PatchedReplicasRequestReplicas | Unset): New replica counts by pool id.
    """

    replicas: PatchedReplicasRequestReplicas | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        replicas: dict[str, Any] | Unset = UNSET
        if not isinstance(self.replicas, Unset):
            replicas = self.replicas.to_dict()

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if replicas is not UNSET:
            field_dict["replicas"] = replicas

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.patched_replicas_request_replicas import (
            PatchedReplicasRequestReplicas,  # noqa: PLC0415
        )

        d = dict(src_dict)
        _replicas = d.pop("replicas", UNSET)
        replicas: PatchedReplicasRequestReplicas | Unset
        if isinstance(_replicas, Unset):
            replicas = UNSET
        else:
            replicas = PatchedReplicasRequestReplicas.from_dict(_replicas)

        patched_replicas_request = cls(
            replicas=replicas,
        )

        return patched_replicas_request
