"""Log entries into the database: lines, step metrics, timeline events, failures, and each
job's denormalised progress. Idempotent: an entry read twice is stored once (unique keys on
(job, insertId)), so the follower may re-read freely."""

from __future__ import annotations

import logging
import weakref
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from django.db import connection, transaction

from contract.events import EVAL, PER_RANK_SECONDS, REPLICA_RESTARTED, RUN_STARTED, TRACKING
from controlplane.core import row_updates
from controlplane.logs import bulk, failure_scan, framework_lines, live, restarts, trust
from controlplane.logs.models import FrameworkTrack, LogLine, StepMetric
from controlplane.runs.models import Job, JobEvent, output_uri_for
from controlplane.teams import policy as team_policy
from vertexplan.logparse import events
from vertexplan.logparse.entries import LogEntry
from vertexplan.logparse.events import ParsedEntry

logger = logging.getLogger(__name__)

LINE_COLUMNS = ("job", "attempt", "timestamp", "severity", "replica", "message", "insert_id")
STEP_COLUMNS = ("job", "attempt", "step", "timestamp", "loss", "lr", "tokens_per_s",
                "step_time_s", "span", "insert_id")
# What the store writes of a step: the columns above and the step's other numbers.
STEP_ROW_COLUMNS = (*STEP_COLUMNS, "extra")
# A step event's per-rank step times, kept as an event of their own (straggler detection), for
# worlds up to this size.
RANK_TIMES = "rank_step_times"
MAX_RANKS_KEPT = 16384
# Entries sorted between two looks at what the COPY may send (each look costs a generator
# step; psycopg sends its buffer in blocks of many rows anyway).
ROUTE_STEP = 64


@dataclass(frozen=True)
class Target:
    """Where an entry of one CustomJob goes: the job and its attempt number."""

    job_id: int
    attempt: int


@dataclass
class Stored:
    offered: int = 0   # entries given
    lines: int = 0     # log lines new to the database
    steps: int = 0     # step metrics new to the database


@dataclass
class _Rows:
    lines: list[tuple[object, ...]] = field(default_factory=list)
    steps: list[tuple[object, ...]] = field(default_factory=list)
    timeline: list[JobEvent] = field(default_factory=list)
    totals: dict[int, int] = field(default_factory=dict)
    stepped: set[int] = field(default_factory=set)
    # Jobs the page brought a restart signal for (a run started, a replica restarted).
    signalled: set[int] = field(default_factory=set)
    # (job, attempt, replica) -> the line rows (LINE_COLUMNS) that may report a failure: the
    # row holds all the scan reads of a line (its time, severity, message, insertId).
    scan: dict[tuple[int, int, str], list[tuple[Any, ...]]] = field(
        default_factory=lambda: defaultdict(list))
    refused: int = 0  # entries routed to a job that are not its own (trust.py)
    # What the page's events add, worked out once the lines are sent (_add_effects): entry,
    # its parse, job, attempt, and why the event is not the job's own (None: it is).
    events: list[tuple[LogEntry, ParsedEntry, int, int, str | None]] = field(
        default_factory=list)
    # job -> {provider: run URL} from its `tracking` events (only http(s) URLs kept)
    tracking: dict[int, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    # The plain lines a team's own framework's recognizer may read (framework_lines.py).
    frameworks: framework_lines.Reader = field(
        default_factory=lambda: framework_lines.Reader({}, {}))


def store_entries(entries: Sequence[LogEntry], targets: Mapping[str, Target]) -> Stored:
    """Store one batch (in timestamp order, as Cloud Logging returns it). Each entry is read
    and checked as its line goes into the COPY, and what the entries' events add (steps,
    timeline) is worked out once the lines are sent, while PostgreSQL stores the lines sent
    before; the failure scan and the rest of the page run while it checks the rows'
    foreign keys."""
    rows = _Rows()
    result = Stored(offered=len(entries))
    with transaction.atomic():
        facts, rows.frameworks, savepoint_made = _facts(entries, targets)
        lines, steps = bulk.insert_batches(
            [bulk.Batch(LogLine, LINE_COLUMNS, rows.lines, keys=("job", "insert_id")),
             bulk.Batch(StepMetric, STEP_ROW_COLUMNS, rows.steps)],
            produce=_route(entries, targets, facts, rows),
            before_finish=lambda: _add_events(rows), savepoint_made=savepoint_made)
        # PostgreSQL checks the rows' jobs (the commit's largest part) while the rest of the
        # page's work runs, its statements queued behind.
        with bulk.checked_meanwhile(LogLine, StepMetric):
            hits = failure_scan.reporting(rows.scan)
            framework_steps = _read_frameworks(rows, facts, lines.new)
            JobEvent.objects.bulk_create(rows.timeline, ignore_conflicts=True,
                                         batch_size=1000)
            failure_scan.store(rows.scan, hits)
            refresh_progress(rows.stepped, rows.totals)
            # Sent when this transaction commits: watchers never hear of a row they cannot
            # read.
            live.page_stored(rows.lines, lines.new, rows.steps)
        # A save() reads its row count: not in the pipeline.
        _store_tracking(rows.tracking)
        result.lines, result.steps = lines.count, steps.count + framework_steps
        if rows.signalled:
            transaction.on_commit(lambda: _detect_restarts(rows.signalled))
    if rows.refused:
        logger.warning("refused %d log entries that claimed a followed job's id but are not "
                       "its replicas' output", rows.refused)
    return result


# Commit without waiting for the WAL flush (SET LOCAL synchronous_commit TO OFF, sent with the
# page's first statement rather than as a round trip of its own). A database crash may then
# lose the last fraction of a second of pages, but together with the cursor positions that say
# they are stored (same transaction), so the follower reads them again: nothing lost or
# doubled, and the commit stops costing a disk flush per page.
_ASYNCHRONOUS_COMMIT = "set_config('synchronous_commit', 'off', true)"
# PostgreSQL: the job facts statement, sent on every page, is prepared once per database
# session (name -> the psycopg connections that have it): planning it took longer than running
# it. A prepared statement outlives a rollback, and its plan follows changes to its tables.
# (The progress update, prepared, was no faster: its plan is cheap.)
_FACTS_STATEMENT = "cp_log_facts"
_prepared: dict[str, weakref.WeakSet[Any]] = {}


def _preparing(cursor: Any) -> bool:
    """Whether _execute_prepared serves `cursor` (a Django cursor): PostgreSQL, with psycopg
    binding client-side as Django does by default (EXECUTE takes no bound parameters)."""
    return connection.vendor == "postgresql" and isinstance(cursor.cursor, psycopg.ClientCursor)


def _execute_prepared(cursor: Any, name: str, types: str, body: str, args: Sequence[Any],
                      after: str = "") -> None:
    sessions = _prepared.setdefault(name, weakref.WeakSet())
    if connection.connection not in sessions:
        # Asked once per session, in case this process lost count of it.
        cursor.execute("SELECT COUNT(*) FROM pg_prepared_statements WHERE name = %s", [name])
        if not cursor.fetchone()[0]:
            cursor.execute(f"PREPARE {name}({types}) AS {body}")
        sessions.add(connection.connection)
    cursor.execute(f"EXECUTE {name}({', '.join(['%s'] * len(args))}){after}", args)


def _facts(entries: Sequence[LogEntry], targets: Mapping[str, Target]
           ) -> tuple[dict[int, trust.JobFacts], framework_lines.Reader, bool]:
    """What each job of the batch may say about itself (controlplane/logs/trust.py), the
    reader of the lines its framework's recognizer may read (framework_lines.py), and
    whether the query made bulk's savepoint."""
    # A page holds a few CustomJobs: their ids are told apart before any is looked up.
    ids = sorted({target.job_id for job in {e.job_id for e in entries}
                  if (target := targets.get(job)) is not None})
    facts: dict[int, trust.JobFacts] = {}
    told: dict[int, tuple[Any, Any]] = {}
    chiefs: dict[int, tuple[str, int]] = {}
    rows, savepoint_made = _job_rows(ids)
    for (pk, custom_job, project, slug, stored, resume_from, request, framework,
         read) in rows:
        facts[pk] = trust.facts_for(custom_job, project,
                                    output_uri_for(pk, team_policy.output_prefix(slug, stored)),
                                    resume_from)
        told[pk] = (custom_job, request)
        if read is not None:  # the chief has a track (of any attempt)
            chiefs[pk] = (framework or "", read)
    commanded = framework_lines.commanded(told)
    return facts, framework_lines.Reader(commanded, framework_lines.saved_tracks(
        commanded, chiefs)), savepoint_made


def _job_rows(ids: Sequence[int]) -> tuple[list[tuple[Any, ...]], bool]:
    """Each job's facts, its team's output prefix (None: no policy row) and its chief's saved
    framework track (framework_lines.saved_tracks: a framework any attempt found, the most
    lines read; None: no track), in one statement (that both PostgreSQL and SQLite read)
    sent on every page: the ORM took longer to build these two queries than PostgreSQL to
    answer them. The statement also makes bulk's savepoint where it can (True)."""
    if not ids:
        return [], False
    # PostgreSQL: the page's commit made asynchronous by the same statement (a page whose jobs
    # are all gone stores nothing to commit).
    asynchronous = f", {_ASYNCHRONOUS_COMMIT}" if connection.vendor == "postgresql" else ""
    with connection.cursor() as cursor:
        savepoint = bulk.savepoint_after(cursor)
        if _preparing(cursor):
            _execute_prepared(cursor, _FACTS_STATEMENT, "text, bigint[]",
                              _facts_select("$1", "= ANY($2)", asynchronous),
                              [framework_lines.CHIEF, list(ids)], after=savepoint)
        else:
            which = f"IN ({', '.join(['%s'] * len(ids))})"
            cursor.execute(_facts_select("%s", which, asynchronous) + savepoint,
                           [framework_lines.CHIEF, framework_lines.CHIEF, *ids])
        rows = [row[:9] for row in cursor.fetchall()]
    # JSON as the ORM reads it (text from PostgreSQL, as Django sets up psycopg, and SQLite).
    job = Job._meta
    custom_job, request = job.get_field("custom_job"), job.get_field("request")
    return [(pk, custom_job.from_db_value(spec, None, connection),  # type: ignore[attr-defined]
             project, slug, stored, resume_from,
             request.from_db_value(asked, None, connection),  # type: ignore[attr-defined]
             framework, read)
            for pk, spec, project, slug, stored, resume_from, asked, framework, read in rows
            ], bool(savepoint)


def _facts_select(replica: str, which: str, also: str) -> str:
    """_job_rows's statement: `replica` the chief's name (a placeholder), `which` the jobs,
    `also` more of the select list."""
    job = Job._meta
    team = job.get_field("team").related_model._meta  # type: ignore[union-attr]
    policy = team.get_field("policy").related_model._meta  # type: ignore[union-attr]
    chief = (f"FROM {FrameworkTrack._meta.db_table} AS f "
             f"WHERE f.job_id = j.id AND f.replica = {replica}")
    return (f"SELECT j.id, j.custom_job, j.project, t.slug, p.output_prefix, j.resume_from, "
            f"j.request, (SELECT MAX(f.framework) {chief}), (SELECT MAX(f.lines_read) {chief})"
            f"{also} FROM {job.db_table} AS j JOIN {team.db_table} AS t ON t.id = j.team_id "
            f"LEFT JOIN {policy.db_table} AS p ON p.team_id = t.id WHERE j.id {which}")


def _route(entries: Sequence[LogEntry], targets: Mapping[str, Target],
           facts: Mapping[int, trust.JobFacts], rows: _Rows) -> Iterator[None]:
    """Sort each entry into `rows`, ROUTE_STEP entries a step (for bulk.insert_batches).

    Most of a log is plain lines, and where a plain line goes (its job and attempt, whether
    it is the job's own output, its replica's failure scan, whether the framework reader
    keeps any of its replica's lines) depends only on its CustomJob, task and log: worked out
    at the first such line of the page, so each other one costs a lookup, its row and its
    place in the scan."""
    check = trust.ReplicaCheck(facts)
    lines, offer, plain_line = rows.lines, rows.frameworks.offer, events.plain_line
    routes: dict[tuple[str, str, str], _PlainRoute | None] = {}
    for start in range(0, len(entries), ROUTE_STEP):
        for entry in entries[start:start + ROUTE_STEP]:
            key = (entry.job_id, entry.task_name, entry.log_name)
            try:
                route = routes[key]
            except KeyError:
                route = routes[key] = _plain_route(rows, check, facts, targets, entry)
            if route is None:
                continue  # no job of ours
            message = plain_line(entry)
            if message is None:
                _add_parsed(rows, check, entry, facts[route.job_id], route.job_id,
                            route.attempt)
            elif route.refused:
                rows.refused += 1
            else:
                row = (route.job_id, route.attempt, entry.timestamp, entry.severity,
                       entry.task_name, message, entry.insert_id)
                lines.append(row)
                if route.scan is None:  # made at its first line to scan, as parsed ones are
                    route.scan = rows.scan[(route.job_id, route.attempt, entry.task_name)]
                route.scan.append(row)
                if route.offered:
                    offer(route.job_id, route.attempt, entry, message)
        yield


@dataclass
class _PlainRoute:
    """Where the plain lines of one CustomJob's task and log go (_route)."""

    job_id: int
    attempt: int
    refused: bool  # not the job's own output (trust.py)
    offered: bool  # the framework reader may keep some of them
    # Its replica's lines to scan for failures (rows.scan's list, once it has one).
    scan: list[tuple[Any, ...]] | None = None


def _plain_route(rows: _Rows, check: trust.ReplicaCheck, facts: Mapping[int, trust.JobFacts],
                 targets: Mapping[str, Target], entry: LogEntry) -> _PlainRoute | None:
    target = targets.get(entry.job_id)
    if target is None or target.job_id not in facts:
        return None
    job_id, number = target.job_id, target.attempt
    # A plain line carries no event, so no path for trust.event_problem to check.
    refused = check.problem(job_id, entry, carries_event=False) is not None
    return _PlainRoute(job_id, number, refused,
                       rows.frameworks.reading(job_id, entry.task_name)[0])


def _add_parsed(rows: _Rows, check: trust.ReplicaCheck, entry: LogEntry,
                job_facts: trust.JobFacts, job_id: int, number: int) -> None:
    """An entry that may carry an event (a JSON payload, a restart notice): its line now,
    in the failure scan's order, and what its event adds once the lines are sent."""
    parsed = events.parse(entry)
    if check.problem(job_id, entry, carries_event=parsed.event is not None) is not None:
        # Not the job's own output: neither a line of it nor an event.
        rows.refused += 1
        return
    row = (job_id, number, entry.timestamp, entry.severity, entry.task_name, parsed.message,
           entry.insert_id)
    rows.lines.append(row)
    problem = _scanned(rows, entry, parsed, job_facts, job_id, number, row)
    if problem is not None or parsed.event is not None:
        rows.events.append((entry, parsed, job_id, number, problem))


def _add_events(rows: _Rows) -> None:
    """What the page's events add (their lines sent: bulk.insert_batches's before_finish)."""
    for entry, parsed, job_id, number, problem in rows.events:
        _add_effects(rows, entry, parsed, job_id, number, problem)


def _add_event(rows: _Rows, entry: LogEntry, parsed: ParsedEntry, job_facts: trust.JobFacts,
               job_id: int, number: int) -> None:
    """What an event read from a framework's line adds (a line of its own already)."""
    problem = _scanned(rows, entry, parsed, job_facts, job_id, number, None)
    _add_effects(rows, entry, parsed, job_id, number, problem)


def _scanned(rows: _Rows, entry: LogEntry, parsed: ParsedEntry, job_facts: trust.JobFacts,
             job_id: int, number: int, row: tuple[Any, ...] | None) -> str | None:
    """Why the entry's event is not the job's own (None: it is); where it is, a failure's
    words in it go to the failure scan. `row`: the entry's line row, where it has one."""
    problem = trust.event_problem(parsed.event, parsed.fields, job_facts)
    if problem is None and parsed.scan:
        rows.scan[(job_id, number, entry.task_name)].append(
            row or (job_id, number, entry.timestamp, entry.severity, entry.task_name,
                    parsed.message, entry.insert_id))
    return problem


def _add_effects(rows: _Rows, entry: LogEntry, parsed: ParsedEntry, job_id: int,
                 number: int, problem: str | None) -> None:
    """What an entry's event adds: a step, a timeline event, a tracking link; a suspicious
    event where its paths are not the job's own (`problem`)."""
    if problem is not None:
        rows.timeline.append(JobEvent(
            job_id=job_id, attempt=number, kind=trust.SUSPICIOUS, timestamp=entry.timestamp,
            replica=entry.task_name, step=parsed.step,
            data=trust.suspicious(parsed.event, parsed.fields, problem),
            insert_id=entry.insert_id))
        return
    if parsed.event == RUN_STARTED and parsed.fields.get("reporter") == framework_lines.REPORTER:
        rows.frameworks.reports_itself(job_id, number)
    if parsed.is_step:
        step, values = parsed.step, events.step_values(parsed)
        total = parsed.fields.get("total_steps")
        if isinstance(total, int) and total > 0:
            rows.totals[job_id] = total
        rows.stepped.add(job_id)
        rows.steps.append((job_id, number, step, entry.timestamp, values["loss"],
                           values["lr"], values["tokens_per_s"], values["step_time_s"], 1,
                           entry.insert_id, events.extra_values(parsed)))
        per_rank = parsed.fields.get("rank_step_time_s")
        if PER_RANK_SECONDS.accepts(per_rank) and len(per_rank) <= MAX_RANKS_KEPT:
            # Every few steps: what straggler detection reads (controlplane/logs/health.py).
            rows.timeline.append(JobEvent(
                job_id=job_id, attempt=number, kind=RANK_TIMES, timestamp=entry.timestamp,
                replica=entry.task_name, step=step,
                data={"rank_step_time_s": per_rank}, insert_id=entry.insert_id))
    elif parsed.event == TRACKING:
        link = events.tracking_link(parsed.fields)
        if link is not None:
            rows.tracking[job_id][link[0]] = link[1]
    elif parsed.is_timeline_event or parsed.event == REPLICA_RESTARTED:
        if parsed.event in restarts.SIGNAL_KINDS:
            rows.signalled.add(job_id)
        rows.timeline.append(JobEvent(
            job_id=job_id, attempt=number, kind=parsed.event, timestamp=entry.timestamp,
            replica=entry.task_name, step=parsed.step, data=parsed.fields,
            insert_id=entry.insert_id,
        ))


def _read_frameworks(rows: _Rows, facts: Mapping[int, trust.JobFacts],
                     new: set[tuple[object, ...]] | None) -> int:
    """The events a team's own framework's lines new to the database mean, added as the
    contract's are; the number of step rows new to the database."""
    found = _Rows()
    read = framework_lines.read_new(rows.frameworks, new)
    for job_id, number, entry, parsed in read.events:
        _add_event(found, entry, parsed, facts[job_id], job_id, number)
    StepMetric.objects.bulk_create(
        [StepMetric(**dict(zip(STEP_ROW_COLUMNS[1:], row[1:], strict=True)), job_id=row[0])
         for row in found.steps], ignore_conflicts=True)
    # Steps (and evaluations at them) guessed before the framework's lines told the interval:
    # this page's events where they are still to be stored, the earlier pages' rows in place.
    moved = {(job_id, insert_id): step for job_id, insert_id, step in read.moves}
    for event in found.timeline:
        if (event.job_id, event.insert_id) in moved and event.kind == EVAL:
            event.step = moved.pop((event.job_id, event.insert_id))
    for (job_id, insert_id), step in moved.items():
        StepMetric.objects.filter(job_id=job_id, insert_id=insert_id).update(step=step)
        JobEvent.objects.filter(job_id=job_id, insert_id=insert_id, kind=EVAL).update(step=step)
        found.stepped.add(job_id)
    rows.steps.extend(found.steps)
    rows.timeline.extend(found.timeline)
    rows.totals.update(found.totals)
    rows.stepped |= found.stepped
    rows.signalled |= found.signalled
    # Each is a new line's, and so a new row (one step row per log entry).
    return len(found.steps)


def _store_tracking(tracking: Mapping[int, dict[str, str]]) -> None:
    if not tracking:  # most pages: not even a query built
        return
    jobs = Job.objects.select_for_update().filter(pk__in=list(tracking)).order_by("pk")
    for job in jobs.only("tracking"):
        job.record_tracking(tracking[job.pk])


def _detect_restarts(job_ids: set[int]) -> None:
    """Keep a job's restart count current as its signals arrive, through the one detection
    that counts them (restarts.py): a replica that runs a process per GPU, or a TPU slice's
    hosts, start several runs at once, and only it tells one run's ranks from a restart. It
    runs once the page is committed, so it reads every event the page stored."""
    for job_id in sorted(job_ids):
        try:
            restarts.refresh(job_id)
        except Exception:
            # The lines are stored; the next reconcile sweep runs detection again.
            logger.exception("restart detection for job %s failed", job_id)


def refresh_progress(stepped: set[int], totals: Mapping[int, int]) -> None:
    """Each stepped job's newest stored step and loss (by time: a re-read of older pages
    never moves progress back), and its total steps where the page told it, in one statement
    whatever the number of jobs. Written as SQL (that both PostgreSQL and SQLite read): the
    ORM's subqueries cost more to build than to run, on every page a running job logs."""
    if not stepped:
        return
    jobs = sorted(stepped)
    job, step = Job._meta.db_table, StepMetric._meta.db_table
    # Both values from one look at the newest row.
    newest = (f"(SELECT m.step, m.loss FROM {step} AS m WHERE m.job_id = {job}.id "
              "ORDER BY m.timestamp DESC, m.step DESC LIMIT 1)")
    total = "total_steps"
    params: list[object] = []
    if totals:
        total = "CASE id " + "WHEN %s THEN %s " * len(totals) + "ELSE total_steps END"
        for job_id, count in totals.items():
            params += [job_id, count]
    if connection.vendor == "postgresql":
        # The rows locked in id order, as every other writer of several jobs' rows locks them
        # (controlplane.core.row_updates): a reconcile sweep writes the same rows meanwhile.
        which = row_updates.in_key_order(connection, job, "id", Job._meta.pk.db_type(connection))
        params.append(jobs)
    else:
        which = f"id IN ({', '.join(['%s'] * len(jobs))})"
        params += jobs
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {job} SET (last_step, last_loss) = {newest}, total_steps = {total} "
            f"WHERE {which}", params)
