from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.patched_job_notes_request_add_tags import PatchedJobNotesRequestAddTags
    from ..models.patched_job_notes_request_tags import PatchedJobNotesRequestTags


T = TypeVar("T", bound="PatchedJobNotesRequest")


@_attrs_define
class PatchedJobNotesRequest:
    """PATCH /api/v1/jobs/<id>/: the team's own words on a job (controlplane/runs/tags.py);
    a field left out is left as it is.

        Attributes:
            tags (PatchedJobNotesRequestTags | Unset): key: value labels, replacing the job's (at most 16; keys and values
                of lowercase letters, digits, '_' and '-', a key starting with a letter); {} removes them all.
            add_tags (PatchedJobNotesRequestAddTags | Unset): key: value labels to add or change, the job's others kept (not
                with tags); made at once with the job's row locked, so edits at the same time all stay.
            remove_tags (list[str] | Unset): Keys of tags to remove, the others kept (not with tags); a key the job does not
                carry is refused and nothing changes.
            note (str | Unset): Free text, at most 2,000 characters; '' clears it.
    """

    tags: PatchedJobNotesRequestTags | Unset = UNSET
    add_tags: PatchedJobNotesRequestAddTags | Unset = UNSET
    remove_tags: list[str] | Unset = UNSET
    note: str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        tags: dict[str, Any] | Unset = UNSET
        if not isinstance(self.tags, Unset):
            tags = self.tags.to_dict()

        add_tags: dict[str, Any] | Unset = UNSET
        if not isinstance(self.add_tags, Unset):
            add_tags = self.add_tags.to_dict()

        remove_tags: list[str] | Unset = UNSET
        if not isinstance(self.remove_tags, Unset):
            remove_tags = self.remove_tags

        note = self.note

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if tags is not UNSET:
            field_dict["tags"] = tags
        if add_tags is not UNSET:
            field_dict["add_tags"] = add_tags
        if remove_tags is not UNSET:
            field_dict["remove_tags"] = remove_tags
        if note is not UNSET:
            field_dict["note"] = note

        return field_dict

    @classmethod
    def from_dict(cls: type[T], src_dict: Mapping[str, Any]) -> T:
        from ..models.patched_job_notes_request_add_tags import (
            PatchedJobNotesRequestAddTags,  # noqa: PLC0415
        )
        from ..models.patched_job_notes_request_tags import PatchedJobNotesRequestTags  # noqa: PLC0415

        d = dict(src_dict)
        _tags = d.pop("tags", UNSET)
        tags: PatchedJobNotesRequestTags | Unset
        if isinstance(_tags, Unset):
            tags = UNSET
        else:
            tags = PatchedJobNotesRequestTags.from_dict(_tags)

        _add_tags = d.pop("add_tags", UNSET)
        add_tags: PatchedJobNotesRequestAddTags | Unset
        if isinstance(_add_tags, Unset):
            add_tags = UNSET
        else:
            add_tags = PatchedJobNotesRequestAddTags.from_dict(_add_tags)

        remove_tags = cast(list[str], d.pop("remove_tags", UNSET))

        note = d.pop("note", UNSET)

        patched_job_notes_request = cls(
            tags=tags,
            add_tags=add_tags,
            remove_tags=remove_tags,
            note=note,
        )

        return patched_job_notes_request
