"""A job's tags and note: the team's own words on it, checked here for the page and the API.

Tags are key=value labels a team puts on its jobs to find them again ("experiment=lr-sweep",
"owner=ann"), written as Vertex writes labels: a key of lowercase letters, digits, "_" and "-"
starting with a letter, a value of the same characters (or empty), at most MAX_TAGS of them.
So a tag is never markup, a path or a shell word, and the job list filters by one with a plain
JSON key lookup. The note is free text up to MAX_NOTE characters, shown as text.

A job's team sees and changes them (members and admins; viewers read); jobs of every kind carry
them, a Ray job or a trial too. A refused change names the field and what is valid, and changes
nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import QuerySet, TextField
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast

from controlplane.runs.models import Job

MAX_TAGS = 16
MAX_PART = 63
MAX_NOTE = 2000
KEY = re.compile(r"[a-z][a-z0-9_-]{0,62}")
VALUE = re.compile(r"[a-z0-9_-]{0,63}")
KEY_RULE = ("a key is 1-63 lowercase letters, digits, '_' or '-', starting with a letter")
VALUE_RULE = "a value is up to 63 lowercase letters, digits, '_' or '-'"


class TagError(ValueError):
    """A refused change; `field` is tags or note."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def _shown(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:40] + "...")


def check_pair(key: Any, value: Any) -> tuple[str, str]:
    if not isinstance(key, str) or not KEY.fullmatch(key):
        raise TagError("tags", f"{_shown(str(key))}: {KEY_RULE}")
    if value is None:
        value = ""
    if not isinstance(value, str) or not VALUE.fullmatch(value):
        raise TagError("tags", f"{key}={_shown(str(value))}: {VALUE_RULE}")
    return key, value


def parse_lines(text: str) -> dict[str, str]:
    """'key=value' lines (or 'key' alone, an empty value; commas also separate) -> tags."""
    tags: dict[str, str] = {}
    for part in re.split(r"[\n,]", text or ""):
        part = part.strip()
        if not part:
            continue
        key, _, value = part.partition("=")
        key, value = check_pair(key.strip(), value.strip())
        tags[key] = value
    return check_tags(tags)


def check_tags(tags: Any) -> dict[str, str]:
    """A tags object from the API (or parsed lines), checked."""
    if not isinstance(tags, Mapping):
        raise TagError("tags", 'an object of key: value strings, e.g. {"experiment": "lr-sweep"}')
    checked = dict(check_pair(k, v) for k, v in tags.items())
    if len(checked) > MAX_TAGS:
        raise TagError("tags", f"{len(checked)} tags; a job has at most {MAX_TAGS}")
    return checked


def check_note(note: Any) -> str:
    if not isinstance(note, str):
        raise TagError("note", "text")
    note = note.replace("\r\n", "\n").strip()
    if "\x00" in note:
        raise TagError("note", "a NUL character is not allowed")
    if len(note) > MAX_NOTE:
        raise TagError("note", f"{len(note):,} characters; a note is at most {MAX_NOTE:,}")
    return note


def show_lines(tags: Mapping[str, str] | None) -> str:
    return "\n".join(f"{k}={v}" if v else k for k, v in (tags or {}).items())


@dataclass(frozen=True)
class Change:
    changed: list[str]            # the fields changed: "tags", "note"
    tags_before: dict[str, str]   # the job's tags as the locked row had them


def check_keys(keys: Any) -> list[str]:
    """The keys of tags to remove (remove_tags): a list of key strings."""
    if not isinstance(keys, list | tuple):
        raise TagError("remove_tags", 'a list of tag keys, e.g. ["owner"]')
    for key in keys:
        if not isinstance(key, str) or not KEY.fullmatch(key):
            raise TagError("remove_tags", f"{_shown(str(key))}: {KEY_RULE}")
    return list(dict.fromkeys(keys))


def update(job: Job, *, tags: Any = None, note: Any = None, add_tags: Any = None,
           remove_tags: Any = None) -> Change:
    """Set what is given (None: leave as is) after checking all of it: `tags` replaces the
    job's tags, `add_tags` adds or changes the ones named and `remove_tags` removes keys, the
    others kept.

    The edit reads and writes the job's row inside one transaction with the row locked
    (SELECT ... FOR UPDATE): two edits at once (two `vcp jobs tag` adding different tags) run
    one after the other, the second seeing the first's tags, so neither is lost."""
    if tags is not None and (add_tags is not None or remove_tags is not None):
        raise TagError("tags", "give tags (the whole set) or add_tags/remove_tags, not both")
    new_tags = check_tags(tags) if tags is not None else None
    adding = check_additions(add_tags) if add_tags is not None else {}
    removing = check_keys(remove_tags) if remove_tags is not None else []
    if both := sorted(set(adding) & set(removing)):
        raise TagError("remove_tags", f"{', '.join(both)}: both added and removed")
    new_note = check_note(note) if note is not None else None
    with transaction.atomic():
        row = Job.objects.select_for_update().only("tags", "note").get(pk=job.pk)
        before = dict(row.tags or {})
        result = dict(before) if new_tags is None else new_tags
        if missing := [key for key in removing if key not in result]:
            raise TagError("remove_tags",
                           f"job {job.pk} has no tag {', '.join(map(repr, missing))} "
                           f"(its tags: {', '.join(sorted(result)) or 'none'})")
        for key in removing:
            del result[key]
        result.update(adding)
        if len(result) > MAX_TAGS:
            raise TagError("tags", f"{len(result)} tags; a job has at most {MAX_TAGS}")
        changed = []
        if result != before:
            row.tags = result
            changed.append("tags")
        if new_note is not None and new_note != row.note:
            row.note = new_note
            changed.append("note")
        if changed:
            row.save(update_fields=changed)
    job.tags, job.note = row.tags, row.note
    return Change(changed, before)


def check_additions(tags: Any) -> dict[str, str]:
    """The tags to add or change (add_tags); their number is checked with the job's own."""
    if not isinstance(tags, Mapping):
        raise TagError("add_tags", 'an object of key: value strings, e.g. {"owner": "ann"}')
    try:
        return dict(check_pair(k, v) for k, v in tags.items())
    except TagError as exc:
        raise TagError("add_tags", str(exc)) from exc


def change_detail(job: Job, change: Change) -> dict[str, Any]:
    """What the audit log keeps of a change: the fields changed, and the tags before and after
    (the note's text stays on the job: the log says only that it changed)."""
    detail: dict[str, Any] = {"changed": change.changed}
    if "tags" in change.changed:
        detail.update(tags=dict(job.tags), was=dict(change.tags_before))
    return detail


def parse_filter(raw: str) -> tuple[str, str | None]:
    """A `tag` filter: 'key' (any value) or 'key=value' -> (key, value or None)."""
    key, sep, value = raw.strip().partition("=")
    key, value = key.strip(), value.strip()
    if not KEY.fullmatch(key):
        raise TagError("tag", f"{_shown(key)}: {KEY_RULE}; write key or key=value")
    if sep and not VALUE.fullmatch(value):
        raise TagError("tag", f"{key}={_shown(value)}: {VALUE_RULE}")
    return key, (value if sep else None)


def filter_tag(jobs: QuerySet[Job], raw: str) -> QuerySet[Job]:
    """The jobs carrying the tag (TagError for a malformed one). The key is a literal JSON
    key (KeyTextTransform never splits it into a path)."""
    key, value = parse_filter(raw)
    # Compared as plain text: the JSON key's own exact lookup reads the value given as JSON,
    # which SQLite (the demo's database) refuses as malformed.
    jobs = jobs.annotate(tag_value=Cast(KeyTextTransform(key, "tags"), TextField()))
    return jobs.filter(tag_value__isnull=False) if value is None else jobs.filter(
        tag_value=value)
