"""Server-rendered pages: the job list, the job page and the parts of it htmx refreshes.

Every query goes through controlplane.teams.access: a job outside the user's teams is a 404, a page
that submits or cancels is a 403 for a role that cannot.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import PermissionDenied
from django.db.models import (
    Case,
    DurationField,
    ExpressionWrapper,
    F,
    IntegerField,
    Prefetch,
    QuerySet,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, Now
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.generic import DetailView, ListView
from rest_framework.exceptions import ValidationError

from controlplane.core import palette
from controlplane.runs import access as runs_access
from controlplane.runs import (
    checkpoints,
    config_keys,
    counts,
    fix_line,
    groups,
    lifecycle,
    links,
    panels,
)
from controlplane.runs.filters import (
    ACCELERATOR_FAMILIES,
    ALL_KINDS,
    filter_accelerator_family,
    filter_jobs,
    filter_kind,
)
from controlplane.runs.models import ACTIVE_STATES, Job, JobKind, JobRestart, JobState
from controlplane.runs.page_paging import JobPaginator
from controlplane.security import audit
from controlplane.security.models import AuditEntry
from controlplane.teams import access
from vertexplan.digits import ascii_int

TIMELINE_LIMIT = 300
# The page links a restart's checkpoint by its id: the event itself is not read.
RESTARTS = JobRestart.objects.order_by("occurred_at", "id")
CHECKPOINT_LIMIT = 100
# The job list's filters beyond state and team (the API's: controlplane/runs/filters.py).
PAGE_FILTERS = ("user", "accelerator", "created_after", "created_before", "tag", "config")
# The list's sortable columns: the `sort` parameter's names and what they order by.
SORTS = {
    "state": "state", "team": "team__name", "name": "name", "progress": "last_step",
    "loss": "last_loss", "restarts": "restarts", "cost": "cost_micros",
    "by": "created_by__username", "created": "created_at", "started": "started_at",
    "ended": "ended_at", "duration": "duration",
    # As the column reads: the first pool's accelerator type, then how many, then the machine.
    "accelerators": ("first_accelerator", "first_accelerator_count", "first_machine"),
}
# The first worker pool's machine, in the CustomJob the column is drawn from.
FIRST_MACHINE = "custom_job__jobSpec__workerPoolSpecs__0__machineSpec__"
SEARCH_MAX = 100
# The kinds the page lists when none is chosen, and its kind menu.
PAGE_KINDS = (JobKind.JOB, JobKind.RAY)
KIND_CHOICES = (("", "jobs and Ray jobs"), (JobKind.JOB, "jobs"), (JobKind.RAY, "Ray jobs"),
                (JobKind.TRIAL, "sweep trials"), (ALL_KINDS, "all"))


# --- job list ------------------------------------------------------------------------------

class JobListView(LoginRequiredMixin, ListView):
    template_name = "runs/job_list.html"
    context_object_name = "jobs"
    paginate_by = 50

    def get_queryset(self) -> QuerySet[Job]:
        jobs = runs_access.visible_jobs_here(self.request)
        # Jobs submitted as jobs unless ?kind= asks for trials, Ray jobs or all (an unknown
        # kind in a hand-edited URL: the default).
        kind = self.request.GET.get("kind", "")
        kind = kind if kind in (*JobKind.values, ALL_KINDS) else ""
        if not kind and groups.asks_sweep(self.request.GET.get("group_by", "")):
            kind = JobKind.TRIAL  # a sweep's jobs are its trials
        # The page lists Ray jobs beside jobs unless a kind is chosen (the API's default is
        # jobs alone): both are runs a user started; trials are their sweep's.
        self.tally_kinds = () if kind else PAGE_KINDS
        jobs = jobs.filter(kind__in=PAGE_KINDS) if not kind else filter_kind(jobs, kind)
        state = self.request.GET.get("state", "")
        state = state if state in JobState.values else ""
        if state:
            jobs = jobs.filter(state=state)
        team = self.request.GET.get("team", "")
        if team:
            jobs = jobs.filter(team__slug=team)
        extra = {k: self.request.GET[k] for k in PAGE_FILTERS if self.request.GET.get(k)}
        # What the jobs' tally may count the list by: the filters as applied here.
        self.tally_params: dict[str, str] | None = {
            **extra, "kind": kind, "state": state, "team": team}
        extra["kind"] = ALL_KINDS  # applied above
        # A bad date, tag or config filter: the list without these filters, and a line saying why.
        try:
            jobs = filter_jobs(jobs, extra)
        except ValidationError as exc:
            self.tally_params = None
            self.filter_error = "; ".join(f"{field}: {' '.join(map(str, problems))}"
                                          for field, problems in exc.detail.items())
        query = self.request.GET.get("q", "").strip()[:SEARCH_MAX]
        if query:
            jobs = jobs.filter(name__icontains=query)
        family = self.request.GET.get("family", "")
        jobs = filter_accelerator_family(jobs, family)
        if query or family:
            self.tally_params = None  # the tally has no column for a name or a family
        # ?group_by=: the filtered jobs as groups (controlplane/runs/groups.py), not as rows.
        self.grouped = groups.for_page(self.request.GET, jobs)
        if self.grouped["grouping"] is not None:
            self.tally_params = None
            return jobs.none()
        # A row shows the CustomJob's accelerators, never the request or the price snapshot.
        return self.sorted(jobs.select_related("team", "created_by").defer(
            "request", "config", "price_snapshot", "recovery_options", "tracking"))

    def get_paginator(self, queryset: QuerySet[Job], per_page: int, orphans: int = 0,
                      allow_empty_first_page: bool = True, **kwargs: Any) -> JobPaginator:
        params = getattr(self, "tally_params", None)
        count = None if params is None else counts.job_list_count(
            self.request.user, params, kinds=getattr(self, "tally_kinds", ()))
        return JobPaginator(queryset, per_page, orphans=orphans, count=count,
                            allow_empty_first_page=allow_empty_first_page, **kwargs)

    def sort_key(self) -> str:
        wanted = self.request.GET.get("sort", "")
        return wanted if wanted.lstrip("-") in SORTS else ""

    def sorted(self, jobs: QuerySet[Job]) -> QuerySet[Job]:
        """By the chosen column (nulls last), else running jobs first, newest first."""
        jobs = jobs.annotate(duration=ExpressionWrapper(
            Coalesce(F("ended_at"), Now()) - F("started_at"), output_field=DurationField()))
        key = self.sort_key()
        if key:
            if key.lstrip("-") == "accelerators":
                # A JSON number orders as a number (a CPU job has no type: last either way).
                jobs = jobs.annotate(first_accelerator=KT(FIRST_MACHINE + "acceleratorType"),
                                     first_accelerator_count=F(FIRST_MACHINE + "acceleratorCount"),
                                     first_machine=KT(FIRST_MACHINE + "machineType"))
            names = SORTS[key.lstrip("-")]
            fields = [F(name) for name in ((names,) if isinstance(names, str) else names)]
            order = [f.desc(nulls_last=True) if key.startswith("-") else f.asc(nulls_last=True)
                     for f in fields]
            return jobs.order_by(*order, "-id")
        active_first = Case(When(state__in=ACTIVE_STATES, then=0), default=1,
                            output_field=IntegerField())
        return jobs.annotate(active_first=active_first).order_by(
            "active_first", "-created_at", "-id")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        # The cause of a failure on its row (the logs app reports it; failed jobs only), read
        # for the whole page in one query.
        diagnoses = panels.reports("diagnosis", context["jobs"])
        # What a Ray job ran on (its cluster's app reports it), read for the page at once.
        origins = panels.origins(context["jobs"])
        fixes = fix_line.for_rows(context["jobs"], diagnoses)
        for job in context["jobs"]:
            job.diagnosis = diagnoses.get(job.pk)
            job.fix = fixes.get(job.pk)
            job.origin = origins.get(job.pk)
        context.update(
            any_active=any(job.state in ACTIVE_STATES for job in context["jobs"]),
            states=JobState.values,
            teams=access.teams_of(self.request.user).order_by("name"),
            selected_state=self.request.GET.get("state", ""),
            kinds=KIND_CHOICES,
            filter_error="; ".join(e for e in (getattr(self, "filter_error", ""),
                                               self.grouped["group_by_error"]) if e),
            **self.grouped, group_by_choices=groups.suggestions(context["jobs"]),
            selected_kind=self.request.GET.get("kind", ""),
            selected_team=self.request.GET.get("team", ""),
            selected={k: self.request.GET.get(k, "") for k in PAGE_FILTERS},
            query=self.request.GET.get("q", "")[:SEARCH_MAX],
            families=ACCELERATOR_FAMILIES,
            selected_family=self.request.GET.get("family", "").upper(),
            sort=self.sort_key(),
            # A header's link sorts by its column, or the other way when it already does.
            sort_next={name: (f"-{name}" if self.sort_key() == name else name)
                       for name in SORTS},
        )
        return context


class JobRowsView(JobListView):
    """The list's table body alone: what the list polls while a listed job is active."""

    template_name = "runs/partials/job_rows.html"


# --- compose ---------------------------------------------------------------------------------


# --- job detail -------------------------------------------------------------------------------

def int_or_404(value: str) -> int:
    try:
        return int(value)
    except ValueError as exc:
        raise Http404("no such job") from exc


def header_panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    active = job.state in ACTIVE_STATES
    # A trial or a Ray job is cancelled, cloned and rerun through its sweep or cluster.
    submitter = access.can_submit_here(request, job.team) and job.on_job_path
    restart_records = restarts_of(job)
    resumable = checkpoints.existing(job)
    diagnosis = panels.report("diagnosis", job)
    return {
        # The first thing a failed job's page says: the cause and the fix (the logs app
        # reports it, this job's request makes the fix one change to make), and a cancel the
        # user asked for, told as such rather than as an error.
        "diagnosis": diagnosis,
        "fix": (fix_line.for_failure(diagnosis, job.request, job.custom_job, job.region)
                if diagnosis else None),
        "cancelled_by": cancelled_by(job),
        "can_cancel": active and submitter,
        "can_clone": job.on_job_path and access.submits_somewhere_here(request),
        "origin": panels.origin(job),
        # Whose lines the page's steps were read from, where a team's own framework runs.
        "framework": panels.report("framework", job),
        "can_resubmit": submitter and not active and bool(resumable),
        "resumable_checkpoints": resumable,
        "attempts": list(job.attempts.all()),
        "restart_records": restart_records,
        "console_links": links.for_job(job),
        "console_links_local": links.emulated(),
        "tracking_links": links.tracking_for(job),
    }


def restarts_of(job: Job) -> list[JobRestart]:
    """The job's restart records in order: as page_jobs() read them, or read now."""
    if "restart_records" in getattr(job, "_prefetched_objects_cache", {}):
        return list(job.restart_records.all())
    return list(RESTARTS.filter(job=job))


def cancelled_by(job: Job) -> str | None:
    """Who asked to cancel a cancelled job ("" when nobody is recorded), or None when the job
    was not cancelled on request."""
    if job.state != JobState.CANCELLED or not job.events.filter(
            kind="state", data__source="cancel").exists():
        return None
    entry = (AuditEntry.objects.filter(action="job.cancel", target_type="job",
                                       target_id=str(job.pk)).order_by("-at").first())
    return entry.actor_name if entry is not None else ""


# Trainer and emulator detail the restart records already summarise.
_TIMELINE_HIDDEN = ("preemption_notice", "phase", "rank_step_times")


# Checkpoint rotation: a long run saves one and deletes another every few minutes, which
# buries a preemption or a failure. Past this many, the timeline folds them away (all but those
# a restart resumed from, which it links) unless asked for with ?timeline=all.
_TIMELINE_CHECKPOINT_KINDS = checkpoints.KINDS
TIMELINE_CHECKPOINTS_UNFOLDED = 3


def timeline_panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    """State changes, trainer events, recoveries and restarts, newest first; checkpoint
    rotation folded away when there is much of it and the page did not ask for all."""
    restarts = restarts_of(job)
    # The checkpoint events page_jobs() read for the other panels, or read now.
    saved = getattr(job, checkpoints.PREFETCHED, None)
    checkpoint_events = (len(saved) if saved is not None
                         else job.events.filter(kind__in=_TIMELINE_CHECKPOINT_KINDS).count())
    show_all = request.GET.get("timeline") == "all"
    folded = not show_all and checkpoint_events > TIMELINE_CHECKPOINTS_UNFOLDED
    if folded:
        resumed_from = {r.checkpoint_id for r in restarts if r.checkpoint_id is not None}
        kept = ([e for e in saved if e.pk in resumed_from] if saved is not None
                else list(job.events.filter(pk__in=resumed_from)))
        events = list(job.events.exclude(kind__in=(*_TIMELINE_HIDDEN,
                                                   *_TIMELINE_CHECKPOINT_KINDS))
                      .order_by("-timestamp", "-id")[:TIMELINE_LIMIT])
        events = sorted([*events, *kept], key=lambda e: (e.timestamp, e.pk),
                        reverse=True)[:TIMELINE_LIMIT]
    else:
        events = list(job.events.exclude(kind__in=_TIMELINE_HIDDEN)
                      .order_by("-timestamp", "-id")[:TIMELINE_LIMIT])
    items = [{"at": e.timestamp, "event": e} for e in events]
    oldest = events[-1].timestamp if len(events) == TIMELINE_LIMIT else None
    items += [{"at": r.occurred_at, "restart": r} for r in restarts
              if oldest is None or r.occurred_at >= oldest]
    items.sort(key=lambda item: item["at"], reverse=True)
    hidden = (checkpoint_events - sum(e.kind in _TIMELINE_CHECKPOINT_KINDS for e in events)
              if folded else 0)
    # The other of the two views, keeping the page's other parameters (the logs' filter).
    toggle = request.GET.copy()
    if show_all:
        toggle.pop("timeline", None)
    else:
        toggle["timeline"] = "all"
    return {"events": events, "timeline": items, "timeline_all": show_all,
            "timeline_toggle": f"?{toggle.urlencode()}#job-timeline",
            "timeline_checkpoints": checkpoint_events, "timeline_folded": hidden,
            "timeline_foldable": checkpoint_events > TIMELINE_CHECKPOINTS_UNFOLDED}


def checkpoints_panel(request: HttpRequest, job: Job) -> dict[str, Any]:
    """The checkpoints still on storage (rotation's deletions left out), newest first."""
    return {"checkpoints": checkpoints.existing(job)[:CHECKPOINT_LIMIT]}


def _job_context(request: HttpRequest, job: Job, parts: list[str]) -> dict[str, Any]:
    context: dict[str, Any] = {"job": job, "active": job.state in ACTIVE_STATES}
    for name in parts:
        panel = panels.get(name)
        if panel is not None:
            context.update(panel.context(request, job))
    return context


def page_jobs(request: HttpRequest) -> QuerySet[Job]:
    """The jobs the request's user sees, each read with what several panels of its page share
    (its attempts: header, links, cost; its checkpoints: header, list, serving; its restarts:
    header, timeline), so no panel asks again."""
    return runs_access.visible_jobs_here(request).prefetch_related(
        "attempts", checkpoints.prefetch(), Prefetch("restart_records", queryset=RESTARTS))


class JobDetailView(LoginRequiredMixin, DetailView):
    template_name = "runs/job_detail.html"
    context_object_name = "job"

    def get_queryset(self) -> QuerySet[Job]:
        return page_jobs(self.request)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context.update(_job_context(self.request, self.object, panels.names()))
        # MFU is known on accelerators only: a job without it at all (a CPU job) has no MFU
        # chart; an active one keeps it hidden until its first MFU (job_detail.js shows it).
        # Drawn when no app reports it.
        context["has_mfu"] = panels.report("mfu", self.object) is not False
        return context


@login_required
@require_GET
def job_partial(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    panel = panels.get(name)
    if panel is None:
        raise Http404("no such part of a job page")
    job = get_object_or_404(page_jobs(request), pk=pk)
    return render(request, panel.template, _job_context(request, job, [name]))


# The compare view overlays at most this many runs (a sweep's trials, a few ablations).
COMPARE_MAX = 8


@login_required
@require_GET
def job_compare(request: HttpRequest) -> HttpResponse:
    """Loss curves of several jobs on one chart: /jobs/compare/?ids=12,14,15 (or ids=12&ids=14).
    Ids that are not numbers or not visible are left out and said so."""
    raw = [part for value in request.GET.getlist("ids") for part in value.split(",")]
    wanted: list[int] = []
    ignored: list[str] = []
    for part in (p.strip() for p in raw):
        number = ascii_int(part)
        if number is not None and number not in wanted:
            wanted.append(number)
        elif part:
            ignored.append(part[:40])
    extra = wanted[COMPARE_MAX:]
    wanted = wanted[:COMPARE_MAX]
    found = {j.pk: j for j in runs_access.visible_jobs(request.user).filter(pk__in=wanted)}
    jobs = [found[pk] for pk in wanted if pk in found]
    ignored += [str(pk) for pk in wanted if pk not in found]
    # One colour a run (its eval line dashed in the same colour), none repeated.
    runs = [{"id": j.pk, "name": f"{j.name} #{j.pk}", "state": j.state, "color": color,
             "metrics_url": reverse("job-metrics", args=[j.pk])}
            for j, color in zip(jobs, palette.colors(len(jobs)), strict=True)]
    # The runs' configurations side by side; ?diff=1 keeps the keys whose values differ.
    config_rows = config_keys.compare_rows([config_keys.of_job(j) for j in jobs])
    only_diff = request.GET.get("diff") == "1"
    return render(request, "runs/compare.html", {
        "jobs": jobs, "runs": runs, "ignored": ignored, "too_many": extra,
        "compare_max": COMPARE_MAX, "ids": ",".join(str(j.pk) for j in jobs),
        "config_rows": [r for r in config_rows if r["differs"]] if only_diff else config_rows,
        "config_keys_total": len(config_rows),
        "config_keys_differ": sum(r["differs"] for r in config_rows), "only_diff": only_diff,
    })


@login_required
@require_GET
def own_code(request: HttpRequest) -> HttpResponse:
    """Bring your own code: the events a trainer prints so the charts, checkpoints and
    recovery work for it."""
    return render(request, "runs/own_code.html", {})


@login_required
@require_POST
def job_cancel(request: HttpRequest, pk: int) -> HttpResponse:
    job = get_object_or_404(runs_access.submitted_jobs(request.user), pk=pk)
    if not access.can_submit(request.user, job.team):
        raise PermissionDenied("your role in this team cannot cancel jobs")
    if lifecycle.request_cancel(job.pk):
        audit.record(request, "job.cancel", job)
        messages.success(request, f"Cancellation of {job.name} requested.")
    else:
        messages.info(request, f"{job.name} has already ended ({job.state}).")
    return redirect("job-detail", pk=job.pk)


