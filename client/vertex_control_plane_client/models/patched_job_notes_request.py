from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.patched_job_notes_request_tags import PatchedJobNotesRequestTags


T = TypeVar("T", bound="PatchedJobNotesRequest")


@_attrs_define
class PatchedJobNotesRequest:
    """PATCH /api/v1/jobs/<id>/: the team's own words on a job (controlplane/runs/tags.py);
    a field left out is left as it is.

        Attributes:
            tags (PatchedJobNotesRequestTags | Unset): key: value labels, replacing the job's (at most 16; keys and values
                of lowercase letters, digits, '_' and '-', a key starting with a letter); {} removes them all.
            note (str | Unset): Free text, at most 2,000 characters; '' clears it.
    """

    tags: PatchedJobNotesRequestTags | Unset = UNSET
    note: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        tags: dict[str, Any] | Unset = UNSET
        if not isinstance(self.tags, Unset):
            tags = self.tags.to_dict()

        note = self.note

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if tags is not UNSET:
            field_dict["tags"] = tags
        if note is not UNSET:
            field_dict["note"] = note

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.patched_job_notes_request_tags import PatchedJobNotesRequestTags  # noqa: PLC0415

        d = dict(src_dict)
        _tags = d.pop("tags", UNSET)
        tags: PatchedJobNotesRequestTags | Unset
        if isinstance(_tags, Unset):
            tags = UNSET
        else:
            tags = PatchedJobNotesRequestTags.from_dict(_tags)

        note = d.pop("note", UNSET)

        patched_job_notes_request = cls(
            tags=tags,
            note=note,
        )

        return patched_job_notes_request
