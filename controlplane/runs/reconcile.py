"""The reconcile sweep: what Vertex says about every unfinished job, read in a few paged
ListCustomJobs calls per region, then each job brought in line by the per-job code
(lifecycle.reconcile) with its listed CustomJob passed in, exactly as a GetCustomJob's answer.

Why listing: Vertex allows a project 600 resource-management requests a minute per region
(VERTEX_FACTS.md A1), and one GetCustomJob per job every 5 s is 12 a minute per job: past the
quota from 50 running jobs on. A page holds PAGE_SIZE jobs, so a sweep's calls grow with pages.

What one sweep asks, per region that holds an unfinished job's current attempt:
1. the control plane's unfinished CustomJobs (its labels, every state but the terminal ones):
   every attempt still running is on these pages;
2. only when an attempt is missing from them (it ended since the last sweep, or is gone): the
   control plane's ended CustomJobs created since the oldest missing attempt was (less
   CLOCK_MARGIN), newest first, until every missing one is found or the pages end;
3. GetCustomJob for an attempt still missing: deleted on Vertex (NotFound fails the job, as
   before), or recorded under a region whose listing does not hold it.
Either listing stops paging once it has found every attempt it looks for.

ListCustomJobs filters on display_name, state, create_time and labels; update_time is not
among them (the API reference of ListCustomJobsRequest.filter), so "updated since the last
sweep" is not asked: an ended job is found by its state and creation time instead, which needs
no cursor kept between sweeps and so cannot miss a change.

The database side goes by the page too (_page): a page of jobs' rows is read in two queries,
and what most jobs need (a running job whose CustomJob did not move: its restarts, health and
cost brought up to date) is asked once for the page (signals.jobs_reconciled), so a sweep's
queries grow with pages of jobs and with the jobs that moved, not with the jobs.

A region whose listing fails for a transient reason (UNAVAILABLE, the request quota) is left
for the next sweep, its jobs untouched, as the per-job loop left a job whose Get failed; one the
backend refuses as such (a filter it does not take) falls back to a Get per job.
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from contract import labels as contract_labels
from controlplane.backends import errors
from controlplane.backends.base import TERMINAL_VERTEX_STATES, Backend, RemoteJob, get_backend
from controlplane.core import memo, row_updates, signals
from controlplane.runs import lifecycle
from controlplane.runs.job_states import job_state_for
from controlplane.runs.models import ACTIVE_STATES, Job, JobAttempt, JobKind, JobState

logger = logging.getLogger(__name__)

# A sweep stops starting new jobs after this long, well inside its lease, so a slow backend
# never lets two sweeps overlap; the jobs it did not reach come first in the next one.
SWEEP_BUDGET_S = 20.0
# Log lines keep arriving for a little while after a job ends (the follower trails it).
RESTART_TRAILING = timedelta(minutes=3)
# Jobs asked for per ListCustomJobs page (the listing reads only the fields it needs, so a page
# stays small). At 100 a page, 10,000 running jobs would be 100 calls a sweep, 1,200 a minute
# at 5 s sweeps: twice Vertex's quota (bench.reconcile_listing); at 500, 20 calls, 240 a
# minute. Vertex states no maximum for this list: a server that pages smaller only adds pages.
PAGE_SIZE = 500
# Jobs read from the database together: a page's rows cost a few queries, so a sweep's
# database work grows with pages of jobs, not jobs.
ROWS_PER_PAGE = 500
# An attempt's creation time may be the control plane's clock (submitted_at when the create's
# answer had none), and Vertex's need not agree with it: the ended listing starts this much
# earlier. Too small a margin costs a Get per job it hides, never a missed job.
CLOCK_MARGIN = timedelta(minutes=10)

# Only CustomJobs the control plane made for a job's attempt carry both labels.
_OURS = f"labels.{contract_labels.JOB}:* AND labels.{contract_labels.ATTEMPT}:*"
_TERMINAL = sorted(TERMINAL_VERTEX_STATES)
UNFINISHED_FILTER = _OURS + "".join(f' AND state!="{state}"' for state in _TERMINAL)


def ended_filter(since: datetime) -> str:
    """The control plane's ended CustomJobs created at SINCE or later."""
    stamp = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    ended = " OR ".join(f'state="{state}"' for state in _TERMINAL)
    return f'{_OURS} AND create_time>="{stamp}" AND ({ended})'


@dataclass(frozen=True)
class Target:
    """An unfinished job's current attempt on Vertex, as the sweep found it in the database."""

    job_id: int
    region: str          # the attempt's region ("" = the backend's own), as the Get would use
    name: str            # its CustomJob
    created: datetime    # when its CustomJob was made, as far as the control plane knows


@dataclass
class Listing:
    """What one sweep's listings found: CustomJobs by name, and the regions left for the next
    sweep because their listing failed."""

    found: dict[str, RemoteJob] = field(default_factory=dict)
    failed_regions: set[str] = field(default_factory=set)

    def remote_for(self, target: Target | None) -> RemoteJob | None:
        return self.found.get(target.name) if target is not None else None


def _pages(backend: Backend, filter_: str, wanted: set[str]) -> dict[str, RemoteJob]:
    """The CustomJobs named in WANTED that the filter's pages hold, paging until every one is
    found or the pages end."""
    found: dict[str, RemoteJob] = {}
    token = ""
    while True:
        page = backend.list_custom_jobs(filter_, page_size=PAGE_SIZE, page_token=token)
        found.update((job.name, job) for job in page.jobs if job.name in wanted)
        token = page.next_page_token
        if not token or len(found) == len(wanted):
            return found


def read(targets: Iterable[Target]) -> Listing:
    """List every region that holds one of the targets (see the module's docstring)."""
    by_region: dict[str, list[Target]] = defaultdict(list)
    for target in targets:
        by_region[target.region].append(target)
    listing = Listing()
    for region, group in by_region.items():
        wanted = {target.name for target in group}
        try:
            backend = lifecycle.backend_for(get_backend(), region)
            found = _pages(backend, UNFINISHED_FILTER, wanted)
            missing = [target for target in group if target.name not in found]
            if missing:
                since = min(target.created for target in missing) - CLOCK_MARGIN
                found.update(_pages(backend, ended_filter(since),
                                    {target.name for target in missing}))
        except errors.TransientBackendError as exc:
            logger.warning("reconcile: listing %s: %s; its jobs wait for the next sweep",
                           region or "the default region", exc)
            listing.failed_regions.add(region)
            continue
        except errors.BackendError:
            logger.exception("reconcile: listing %s refused; its jobs are got one by one",
                             region or "the default region")
            continue
        listing.found.update(found)
    return listing


def unfinished() -> list[tuple[int, Target | None]]:
    """The unfinished jobs, longest unseen first, each with its current attempt's CustomJob
    (None while it has none). Trials and Ray jobs are their sweep's and cluster's to follow."""
    jobs = (Job.objects.filter(state__in=ACTIVE_STATES, kind=JobKind.JOB)
            .order_by(F("reconciled_at").asc(nulls_first=True), "pk")
            .values_list("pk", flat=True))
    attempts = (JobAttempt.objects
                .filter(job__state__in=ACTIVE_STATES, job__kind=JobKind.JOB,
                        number=F("job__attempt"))
                .exclude(vertex_name="")
                .values_list("job_id", "region", "vertex_name", "submitted_at", "created_at"))
    targets = {job_id: Target(job_id, region, name, submitted or created)
               for job_id, region, name, submitted, created in attempts}
    return [(job_id, targets.get(job_id)) for job_id in jobs]


def sweep(budget_s: float = SWEEP_BUDGET_S) -> int:
    """Level-triggered: every unfinished job, whatever happened before. Returns how many
    jobs were reconciled.

    The longest-unseen jobs go first, so a sweep cut short by its budget never starves the
    same jobs twice. Jobs are taken a page (ROWS_PER_PAGE) at a time: see _page."""
    started = time.monotonic()
    jobs = unfinished()
    listing = read(target for _, target in jobs if target is not None)
    done = 0
    for first in range(0, len(jobs), ROWS_PER_PAGE):
        if time.monotonic() - started > budget_s:
            break
        page = [(job_id, target) for job_id, target in jobs[first:first + ROWS_PER_PAGE]
                if target is None or target.region not in listing.failed_regions]
        done += _page(page, listing, lambda: time.monotonic() - started > budget_s)
    trail_ended()
    return done


def _page(page: list[tuple[int, Target | None]], listing: Listing,
          out_of_time: Callable[[], bool]) -> int:
    """Reconcile one page of jobs, in a few queries for the page plus a few for each job
    that moved. Most jobs are as their listed CustomJob says (a running job's steady state):
    only the time they were seen is written. A job whose listed CustomJob moved on to
    another unfinished state is recorded with the others that did, in one transaction. Both
    kinds are then handed on together (signals.jobs_reconciled: restart detection, health,
    cost). The rest (ended, gone, cancelling, never submitted, or listed under another
    CustomJob) go through the per-job code one by one, as before. Returns how many jobs were
    reconciled."""
    states = dict(Job.objects.filter(pk__in=[job_id for job_id, _ in page])
                  .values_list("pk", "state"))
    attempts = {attempt.job_id: attempt for attempt in JobAttempt.objects.filter(
        job_id__in=list(states), number=F("job__attempt")).defer("submitted_spec",
                                                                 "price_snapshot")}
    steady: list[int] = []
    moved: dict[int, RemoteJob] = {}
    for job_id, target in page:
        listed = listing.remote_for(target)
        if job_id not in states:
            continue
        if in_line(states[job_id], attempts.get(job_id), listed):
            steady.append(job_id)
        elif listed is not None and _moving(states[job_id], attempts.get(job_id), listed):
            moved[job_id] = listed
    if steady:
        row_updates.update_each(Job, steady, reconciled_at=timezone.now())
    together = steady + _record_moves(moved)
    if together:
        try:
            signals.jobs_reconciled.send(sender=Job, job_ids=together)
        except SoftTimeLimitExceeded:
            raise
        except Exception:
            # What the page's receivers left undone, the per-job code does (it is idempotent).
            logger.exception("reconcile: %d jobs failed together; one by one", len(together))
            together = []
    done = len(together)
    handed_on = set(together)
    for job_id, target in page:
        if job_id in handed_on:
            continue
        if out_of_time():
            break
        try:
            lifecycle.reconcile(job_id, listing.remote_for(target))
            done += 1
        except errors.TransientBackendError as exc:
            # The next sweep tries again; one slow job must not stop the others.
            logger.warning("reconcile job %s: %s", job_id, exc)
        except SoftTimeLimitExceeded:
            raise  # the sweep's time is up: stop here, the next sweep starts with the rest
        except Exception:
            # A broker or database hiccup, or a bug with one job: log it, go on with the rest.
            logger.exception("reconcile job %s failed", job_id)
    return done


def in_line(job_state: str, attempt: JobAttempt | None, listed: RemoteJob | None) -> bool:
    """Whether lifecycle.reconcile() of a job in JOB_STATE whose current attempt is ATTEMPT,
    with LISTED as its CustomJob, would record nothing but the time it looked (the sweep's
    steady case: it skips the row lock and the writes). A job being cancelled is never in
    line: reconcile may send its cancel again."""
    if listed is None or attempt is None or listed.name != attempt.vertex_name or \
            job_state not in ACTIVE_STATES or job_state == JobState.CANCELLING or \
            listed.is_terminal:
        return False
    # What _record_remote would write, already written.
    if listed.state != attempt.vertex_state or listed.job_id != attempt.vertex_job_id or \
            attempt.submitted_at is None or \
            (attempt.started_at is None and listed.start_time is not None):
        return False
    new_state = job_state_for(listed.state)
    return new_state is None or new_state == job_state


def _moving(job_state: str, attempt: JobAttempt | None, listed: RemoteJob) -> bool:
    """Whether the job's listed CustomJob (its current attempt's) moved on to another
    unfinished state: recorded as lifecycle.reconcile() records it, with nothing it does
    for an ending attempt (restarts first, recovery) to do."""
    return attempt is not None and listed.name == attempt.vertex_name and \
        job_state in ACTIVE_STATES and job_state != JobState.CANCELLING and \
        not listed.is_terminal


def _record_moves(moved: dict[int, RemoteJob]) -> list[int]:
    """Record the moved jobs' CustomJobs (see _moving) with their rows locked together (in id
    order, as every locker of several rows), each through lifecycle.record_remote, as
    lifecycle.reconcile() would. Returns the jobs recorded; one that changed meanwhile is left
    to the per-job code, and all are if any one fails."""
    if not moved:
        return []
    recorded: list[int] = []
    try:
        # One transaction: what the moves read of their teams (their Slack channels) is read
        # once for the page.
        with transaction.atomic(), memo.scope():
            # FOR NO KEY UPDATE: it holds up the jobs' other changes, not their log lines
            # and events (their foreign keys' checks), which the log store writes meanwhile.
            jobs = Job.objects.select_for_update(of=("self",), no_key=True).filter(
                pk__in=list(moved)).order_by("pk")
            attempts = {attempt.job_id: attempt for attempt in JobAttempt.objects
                        .select_for_update(of=("self",), no_key=True)
                        .filter(job_id__in=list(moved), number=F("job__attempt"))}
            for job in jobs:
                attempt = attempts.get(job.pk)
                if _moving(job.state, attempt, moved[job.pk]) and attempt is not None:
                    lifecycle.record_remote(job, attempt, moved[job.pk], source="reconcile")
                    recorded.append(job.pk)
            Job.objects.filter(pk__in=recorded).update(reconciled_at=timezone.now())
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        logger.exception("reconcile: %d moved jobs failed together; one by one", len(moved))
        return []
    return recorded


def nothing_to_do() -> bool:
    """No job for a sweep: none unfinished (unfinished()), none ended recently enough to be
    trailed (trail_ended()). One read, where a sweep's lease alone is two writes."""
    return not Job.objects.filter(
        Q(state__in=ACTIVE_STATES) | Q(ended_at__gte=timezone.now() - RESTART_TRAILING),
        kind=JobKind.JOB).exists()


def trail_ended() -> None:
    """Restarts that lines arriving after a job's end reveal are still recorded, and a late
    preemption changes the final cost: asked for the recently ended jobs together, and one by
    one only when that fails."""
    recent = list(Job.objects.filter(ended_at__gte=timezone.now() - RESTART_TRAILING,
                                     kind=JobKind.JOB).values_list("pk", flat=True))
    if not recent:
        return
    try:
        signals.jobs_reconciled.send(sender=Job, job_ids=recent)
        return
    except SoftTimeLimitExceeded:
        raise
    except Exception:
        logger.exception("restart detection for %d ended jobs failed together", len(recent))
    for job_id in recent:
        try:
            signals.restarts_due.send(sender=Job, job_id=job_id, force=False)
            signals.job_reconciled.send(sender=Job, job_id=job_id)
        except SoftTimeLimitExceeded:
            raise
        except Exception:
            logger.exception("restart detection for job %s failed", job_id)
