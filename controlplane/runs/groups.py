"""Groups of jobs, as W&B groups runs: the job list (page and API) grouped by a tag key, a
configuration key or the sweep a trial belongs to, one row a group with its aggregate.

    ?group_by=tag:experiment     the value of the jobs' tag `experiment`
    ?group_by=config:lr          the value of the flat configuration key `lr` (config_keys.py)
    ?group_by=sweep              the sweep of a trial (its configuration's `sweep` key); the
                                 list's kind is then trials unless another is asked for

The key is a user's text: it is checked against the rule of its kind (a tag key's in tags.py,
a configuration key's in config_keys.py) and read with a JSON key transform, a literal key that
is never a path and never SQL text. Grouping comes after the list's filters, on the jobs the
caller's teams may see.

Two queries whatever the number of groups: one aggregates every group (jobs by state, the best
and mean last loss, cost, running time, accelerator-hours), one reads the newest jobs of each
group shown (a row number over each group). At most MAX_GROUPS groups, the largest first, and
`more` says when there were others.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode

from django.db.models import (
    Avg,
    Count,
    DurationField,
    ExpressionWrapper,
    F,
    Func,
    IntegerField,
    Min,
    Q,
    QuerySet,
    Sum,
    TextField,
    Window,
)
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Cast, Coalesce, Now, RowNumber
from django.http import QueryDict
from django.urls import reverse

from controlplane.runs import config_keys, tags
from controlplane.runs.models import Job, JobState
from vertexplan import summaries
from vertexplan.pricing import display_usd

MAX_GROUPS = 200
# The newest jobs each group lists (and Compare opens: its own limit is the same eight).
GROUP_JOBS = 8
SWEEP = "sweep"
RULE = (f"write tag:KEY (a tag key: {tags.KEY_RULE[len('a key is '):]}), config:KEY (a "
        "configuration key: letters, digits, '_' and '.', e.g. config:lr or "
        f"config:batch.micro_batch_size, at most {config_keys.MAX_KEY} characters) or "
        f"{SWEEP}")


class GroupByError(ValueError):
    """A refused `group_by`; the message names it and what is valid."""

    field = "group_by"


@dataclass(frozen=True)
class GroupBy:
    source: str   # the JSON column the key is read from: "tags" or "config"
    key: str

    @property
    def text(self) -> str:
        """As asked for: tag:KEY, config:KEY or sweep."""
        if self.source == "config" and self.key == SWEEP:
            return SWEEP
        return f"{'tag' if self.source == 'tags' else 'config'}:{self.key}"

    @property
    def is_sweep(self) -> bool:
        return self.source == "config" and self.key == SWEEP

    def expression(self) -> Cast:
        # As plain text, so a number and a string group (and read) as the JSON writes them.
        return Cast(KeyTextTransform(self.key, self.source), TextField())

    def filter_params(self, value: str | None) -> dict[str, str] | None:
        """The list's filter that lists one group's jobs, or None where no filter can (the
        jobs without the key; a value the filter's grammar cannot carry)."""
        if value is None:
            return None
        if self.source == "tags":
            return {"tag": f"{self.key}={value}"} if tags.VALUE.fullmatch(value) else None
        if len(value) > config_keys.MAX_VALUE or value != value.strip() or "\x00" in value:
            return None
        return {"config": f"{self.key}={value}"}


def parse(raw: str) -> GroupBy:
    """tag:KEY, config:KEY or sweep -> GroupBy; GroupByError naming what is valid."""
    text = raw.strip()
    shown = repr(text if len(text) <= 60 else text[:60] + "...")
    if text.lower() == SWEEP:
        return GroupBy("config", SWEEP)
    source, _, key = text.partition(":")
    source = source.strip().lower()
    key = key.strip()
    if source == "tag" and tags.KEY.fullmatch(key):
        return GroupBy("tags", key)
    if source == "config" and len(key) <= config_keys.MAX_KEY and \
            config_keys.KEY.fullmatch(key):
        return GroupBy("config", key)
    raise GroupByError(f"{shown}: {RULE}")


@dataclass
class Grouping:
    by: GroupBy
    groups: list[dict[str, Any]]
    more: bool          # more groups than MAX_GROUPS: the smallest are left out
    limit: int


def _running_time() -> ExpressionWrapper:
    return ExpressionWrapper(Coalesce(F("ended_at"), Now()) - F("started_at"),
                             output_field=DurationField())


class _Accelerators(Func):
    """A job's accelerators from its CustomJob, as goodput.accelerators and pool_summaries read
    it: each worker pool's acceleratorCount x replicaCount (a missing replica count is 1, a
    missing accelerator count 0, so a CPU job has none), added up in the database so the groups
    stay one query. A count that is not a plain number (the JSON writes an int64 as a string)
    counts as the default rather than failing the cast."""

    _POOLS = "(%(expressions)s -> 'jobSpec' -> 'workerPoolSpecs')"
    template = (
        "(SELECT COALESCE(SUM("
        "CASE WHEN spec -> 'machineSpec' ->> 'acceleratorCount' ~ '^[0-9]{1,6}$' "
        "THEN (spec -> 'machineSpec' ->> 'acceleratorCount')::bigint ELSE 0 END * "
        "CASE WHEN spec ->> 'replicaCount' ~ '^[0-9]{1,6}$' "
        "THEN (spec ->> 'replicaCount')::bigint ELSE 1 END), 0) "
        f"FROM jsonb_array_elements(CASE WHEN jsonb_typeof({_POOLS}) = 'array' "
        f"THEN {_POOLS} ELSE '[]'::jsonb END) AS spec)")
    output_field = IntegerField()


def _accelerator_time() -> ExpressionWrapper:
    """Accelerators x running time, a job's accelerator-time (an interval)."""
    return ExpressionWrapper(_Accelerators(F("custom_job")) * _running_time(),
                             output_field=DurationField())


def group(jobs: QuerySet[Job], by: GroupBy, limit: int | None = None) -> Grouping:
    """The groups of `jobs` (already filtered and team-scoped), largest first, then by value
    (the jobs without the key last): their aggregates and newest jobs, in two queries; at most
    `limit` groups (MAX_GROUPS)."""
    limit = MAX_GROUPS if limit is None else limit
    keyed = jobs.order_by().annotate(group_value=by.expression())
    per_state = {f"state_{state}": Count("pk", filter=Q(state=state))
                 for state in JobState.values}
    rows = list(keyed.values("group_value").annotate(
        jobs=Count("pk"), best_loss=Min("last_loss"), mean_loss=Avg("last_loss"),
        cost_micros=Sum("cost_micros"), lost_micros=Sum("lost_micros"),
        running=Sum(_running_time()), accelerator_time=Sum(_accelerator_time()),
        **per_state,
    ).order_by("-jobs", F("group_value").asc(nulls_last=True))[:limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    members = _newest(keyed, [row["group_value"] for row in rows], more)
    groups = []
    for row in rows:
        running: timedelta | None = row["running"]
        accelerator_time: timedelta | None = row["accelerator_time"]
        value = row["group_value"]
        groups.append({
            "value": value,
            "jobs": row["jobs"],
            "states": {state: row[f"state_{state}"] for state in JobState.values
                       if row[f"state_{state}"]},
            "best_loss": row["best_loss"],
            "mean_loss": row["mean_loss"],
            "cost_micros": int(row["cost_micros"] or 0),
            "lost_micros": int(row["lost_micros"] or 0),
            "running_seconds": max(0, int(running.total_seconds())) if running else 0,
            "accelerator_hours": round(max(0.0, accelerator_time.total_seconds()) / 3600, 3)
            if accelerator_time else 0.0,
            "newest": members.get(value, []),
            "filter": by.filter_params(value),
        })
    return Grouping(by, groups, more, limit)


def _newest(keyed: QuerySet[Job], values: list[str | None],
            only_these: bool) -> dict[str | None, list[dict[str, Any]]]:
    """The GROUP_JOBS newest jobs of each group, in one query (a row number over each group's
    jobs, newest first); only the groups shown where some are left out."""
    if not values:
        return {}
    if only_these:
        named = [v for v in values if v is not None]
        wanted = Q(group_value__in=named)
        if None in values:
            wanted |= Q(group_value__isnull=True)
        keyed = keyed.filter(wanted)
    ranked = keyed.annotate(place=Window(
        RowNumber(), partition_by=[F("group_value")],
        order_by=[F("created_at").desc(), F("id").desc()]))
    out: dict[str | None, list[dict[str, Any]]] = {}
    for job in ranked.filter(place__lte=GROUP_JOBS).values(
            "id", "name", "state", "last_loss", "group_value").order_by(
            "group_value", "-created_at", "-id"):
        value = job.pop("group_value")
        out.setdefault(value, []).append(job)
    return out


# --- the jobs page ------------------------------------------------------------------------------

# Dropped from the page's links to a group: grouping itself and the list's paging.
_NOT_CARRIED = ("group_by", "page")


def asks_sweep(raw: str) -> bool:
    """Whether `group_by` groups by sweep: the page then lists trials unless a kind is asked."""
    return raw.strip().lower() == SWEEP


def for_page(params: QueryDict, jobs: QuerySet[Job]) -> dict[str, Any]:
    """The page's groups of the filtered `jobs` (`grouping`: None when the page is not grouped
    or `group_by_error` says why it is not), each with its figures as the page writes them."""
    raw = params.get("group_by", "").strip()
    if not raw:
        return {"grouping": None, "group_by": "", "group_by_error": ""}
    try:
        by = parse(raw)
    except GroupByError as exc:
        return {"grouping": None, "group_by": raw[:130], "group_by_error": f"group_by: {exc}"}
    grouping = group(jobs, by)
    compare = reverse("job-compare")
    for item in grouping.groups:
        named = item.pop("filter")
        carried = params.copy()
        for name in _NOT_CARRIED:
            carried.pop(name, None)
        # The group's own filter beside the page's, unless it would replace one of them.
        if named is None or any(carried.get(k, "").strip() for k in named):
            item["list_url"] = None
        else:
            carried.update(named)
            item["list_url"] = f"{reverse('job-list')}?{carried.urlencode()}"
        ids = ",".join(str(job["id"]) for job in item["newest"])
        item["compare_url"] = f"{compare}?{urlencode({'ids': ids})}"
        item["cost"] = display_usd(item["cost_micros"])
        item["lost"] = display_usd(item["lost_micros"]) if item["lost_micros"] else ""
        item["running"] = (summaries.duration_text(item["running_seconds"])
                           if item["running_seconds"] else "\N{EN DASH}")
        item["accelerator"] = accelerator_hours_text(item["accelerator_hours"])
    return {"grouping": grouping, "group_by": by.text, "group_by_error": ""}


def accelerator_hours_text(hours: float) -> str:
    """'12.5 GPU-h' as the page and the CLI write a group's accelerator-hours (TPU chips count
    as GPUs do); a dash for a group of CPU jobs."""
    if hours <= 0:
        return "\N{EN DASH}"
    return f"{hours:,.1f} GPU-h" if hours >= 0.1 else f"{hours:.3f} GPU-h"


def suggestions(jobs: Any) -> list[str]:
    """What the page's Group by field offers: sweep, the tag keys of the jobs shown, and the
    configuration keys most runs vary."""
    keys = sorted({key for job in jobs for key in (getattr(job, "tags", None) or {})})
    return [SWEEP, *(f"tag:{key}" for key in keys[:20]), *SUGGESTED_CONFIG]


SUGGESTED_CONFIG = ("config:lr", "config:strategy", "config:preset",
                    "config:batch.micro_batch_size", "config:chief.accelerator_type")
