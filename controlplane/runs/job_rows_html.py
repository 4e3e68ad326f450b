"""The job list's rows, written in Python.

Through the template engine a row cost about 350 us (some forty variable lookups, filters and
an include for its progress bar), fifty rows a page, and the list redraws its rows every 5 s
while a listed job runs; here a row costs a few tens. Values are written as the engine writes
`{{ value }}` (controlplane/runs/html_values.py); the HTML is the template's, row for row.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import tzinfo
from typing import Any

from django.template.defaultfilters import floatformat, truncatechars
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from controlplane.runs.html_values import reader_zone, value_html
from controlplane.runs.models import Job, JobState
from vertexplan import summaries
from vertexplan.pricing import display_usd

DASH = "\N{EN DASH}"


def job_rows(jobs: Iterable[Job], zone: tzinfo | None = None) -> SafeString:
    """The <tr> of each job, in order. A job may carry `diagnosis` (the logs app's headline
    of its failure, set by the list view)."""
    zone = reader_zone(zone)
    now = timezone.now()
    return mark_safe("".join(_row(job, zone, now) for job in jobs))


def _row(job: Job, zone: tzinfo, now: Any) -> str:
    pk, name = value_html(job.pk), value_html(job.name)
    state = value_html(job.state)
    created = _local(job.created_at, zone)
    started = _local(job.started_at, zone)
    ended = _local(job.ended_at, zone)
    loss = DASH if job.last_loss is None else floatformat(job.last_loss, 4)
    cost = display_usd(job.cost_micros)
    if job.lost_micros:
        cost += (f' <span class="muted small" title="lost to preemptions">'
                 f"({display_usd(job.lost_micros)} lost)</span>")
    return (
        "\n  <tr>\n"
        f'    <td><input type="checkbox" name="ids" value="{pk}" form="compare-form" '
        f'id="compare-{pk}" hx-preserve="true" aria-label="compare {name} #{pk}"></td>\n'
        f'    <td><span class="badge state-{value_html(job.state.lower())}">{state}</span></td>\n'
        f"    <td>{value_html(job.team.name)}</td>\n"
        f'    <td><a href="{reverse("job-detail", args=[job.pk])}">{name}</a> '
        f'<span class="muted">#{pk}</span>{_notes(job)}</td>\n'
        f'    <td class="mono small">{value_html(summaries.accelerator_summary(job.custom_job))}'
        "</td>\n"
        f"    <td>{_progress(job)}</td>\n"
        f'    <td class="num mono">{loss}</td>\n'
        f'    <td class="num">{value_html(job.restarts)}</td>\n'
        '    <td class="num mono cost" title="billed so far; final once the job has ended">'
        f"{cost}</td>\n"
        '    <td class="num time" title="running time: started to ended (or now)">'
        f"{_duration(job, now)}</td>\n"
        f"    <td>{value_html(job.created_by.get_username())}</td>\n"
        f'    <td class="time" title="{_iso(created)}">{_strf(created, "%Y-%m-%d %H:%M")}</td>\n'
        f'    <td class="time" title="{_iso(started)}">'
        f'{_strf(started, "%m-%d %H:%M") or DASH}</td>\n'
        f'    <td class="time" title="{_iso(ended)}">{_strf(ended, "%m-%d %H:%M") or DASH}</td>\n'
        "  </tr>\n  ")


def _notes(job: Job) -> str:
    """What the name cell says under the name: the quota a job waits for, the cause of its
    failure (with its fix) or Vertex's error."""
    notes = ""
    if job.state == JobState.WAITING_FOR_QUOTA:
        wait: Mapping[str, Any] = job.quota_wait if isinstance(job.quota_wait, dict) else {}
        limit = ""
        if wait.get("limit") is not None:
            limit = (f" ({_field(wait, 'requested')} needed, {_field(wait, 'usage')} in use, "
                     f"limit {_field(wait, 'limit')})")
        notes += ('<div class="row-diagnosis small">waiting for quota: '
                  f"{value_html(wait.get('metric') or 'accelerators')} in "
                  f"{_field(wait, 'region')}{limit}</div>")
    diagnosis = getattr(job, "diagnosis", None)
    if diagnosis:
        summary, fix = diagnosis.get("summary", ""), diagnosis.get("fix", "")
        notes += (f'<div class="row-diagnosis small" title="{value_html(summary)}">'
                  f"{value_html(diagnosis.get('title', ''))}: "
                  f"{value_html(truncatechars(summary, 90))}</div>"
                  f'<div class="row-fix small" title="{value_html(fix)}">Fix: '
                  f"{value_html(truncatechars(fix, 140))}</div>")
    elif job.state == JobState.FAILED and job.error_message:
        notes += (f'<div class="row-diagnosis small" '
                  f'title="{value_html(truncatechars(job.error_message, 1000))}">'
                  f"{value_html(truncatechars(job.error_message, 120))}</div>")
    return notes


def _field(mapping: Mapping[str, Any], key: str) -> str:
    """`{{ mapping.key }}`: empty when the key is missing."""
    return value_html(mapping[key]) if key in mapping else ""


def _progress(job: Job) -> str:
    percent = summaries.progress_percent(job.last_step, job.total_steps)
    step = "?" if job.total_steps is None else value_html(job.total_steps)
    done = DASH if job.last_step is None else value_html(job.last_step)
    label = DASH if job.last_step is None else f"{done}/{step}"
    return (f'<div class="progress" title="{done} / {step} steps">\n'
            f'  <div class="bar"><span data-width="{value_html(percent or 0)}"></span></div>\n'
            f'  <span class="label mono">{label}</span>\n'
            "</div>\n")


def _duration(job: Job, now: Any) -> str:
    """Started to ended, or to now while it runs; a dash before it starts."""
    if job.started_at is None:
        return DASH
    end = job.ended_at or now
    return value_html(summaries.duration_text(max((end - job.started_at).total_seconds(), 0)))


def _local(at: Any, zone: tzinfo) -> Any:
    return None if at is None else at.astimezone(zone)


def _iso(local: Any) -> str:
    return "" if local is None else value_html(local.isoformat())


def _strf(local: Any, fmt: str) -> str:
    return "" if local is None else local.strftime(fmt)
