"""A team's own framework's lines read as the contract's events while the store takes them in
(issue 36): the HF Trainer's loss dicts, torchtitan's step lines, Lightning's bars, DeepSpeed's
and torchrun's lines, by the recognizers of vertexplan/logparse/frameworks, with no change to
the job's code.

Which framework a job runs is told by its command (`accelerate launch`, `-m torchtitan.train`,
the product's own `-m trainers.train`, whose events are JSON and whose text no recognizer
reads); failing that, by its first lines (up to DETECT_LINES of the chief's). A job neither
tells keeps its lines plain.

The follower reads entries more than once (the head and settle passes overlap, the tail and
the list store the same entry), and the recognizers count (the HF Trainer's step is the count
of its loss lines times an interval its checkpoints narrow). So a line is read only when it
is new to the database, in the transaction that stores it, by the state saved for its job,
attempt and replica (controlplane.logs.models.FrameworkTrack, locked for the transaction):
each line is counted exactly once, in order, whichever worker stores it, after any restart.

A process that prints the contract's own events (callbacks/vcp_callbacks: exact steps, per-rank
times) is read from those: its framework's lines then stay lines.

Only the chief replica's (workerpool0-0) steps, evaluations, checkpoints and ends are kept:
the HF Trainer logs on the first process of every node, and the other nodes' lines repeat
the chief's. A restart (torchrun's line) is kept from any replica.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from contract import events as contract_events
from controlplane.core import row_updates
from controlplane.logs.models import FrameworkTrack
from controlplane.runs.models import Job
from vertexplan.logparse.entries import LogEntry
from vertexplan.logparse.events import ParsedEntry
from vertexplan.logparse.frameworks import detect, loop_bar, registry, saved

CHIEF = "workerpool0-0"
# The chief's lines read, while no framework is known, before its lines are left plain.
DETECT_LINES = 200
# The estimated step lines kept to be placed again (a run logs a few dozen before its first
# checkpoint tells the interval; past this, the oldest stay where they were guessed).
MAX_PENDING = 512
PENDING = "pending"
REPORTED = "reported"
# What the callbacks (callbacks/vcp_callbacks) name themselves on run_started.
REPORTER = "vcp-callbacks"
# The events whose step may be a guess placed again (a step row, an evaluation at it).
PLACED_AGAIN = frozenset({contract_events.STEP, contract_events.EVAL})
# The redraws of one entry read (an epoch's bar: one per batch, and per postfix change).
MAX_REDRAWS = 512
# Events of any replica; the others only from the chief's lines.
ANY_REPLICA = frozenset({contract_events.REPLICA_RESTARTED})


def command_of(custom_job: Mapping[str, Any] | None) -> list[str]:
    """The first pool's command and arguments as the job gives them (a container's command
    and args, or a Python package's module as `python -m`)."""
    spec = (custom_job or {}).get("jobSpec") or {}
    pools = [p for p in spec.get("workerPoolSpecs") or [] if isinstance(p, dict) and p]
    if not pools:
        return []
    pool = pools[0]
    words: list[Any] = []
    container = pool.get("containerSpec")
    package = pool.get("pythonPackageSpec")
    if isinstance(container, dict):
        words = [*(container.get("command") or []), *(container.get("args") or [])]
    elif isinstance(package, dict):
        words = ["python", "-m", package.get("pythonModule") or "",
                 *(package.get("args") or [])]
    return [w for w in words if isinstance(w, str)]


def framework_of(custom_job: Mapping[str, Any] | None,
                 request: Mapping[str, Any] | None = None) -> str | None:
    """What the job's request names (its `framework` field), else what its command says it
    runs, or None when neither tells."""
    named = (request or {}).get("framework")
    if isinstance(named, str) and named in registry.FRAMEWORKS:
        return named
    return detect.from_command(command_of(custom_job))


@dataclass
class _Line:
    attempt: int
    replica: str
    entry: LogEntry
    message: str


@dataclass
class Reader:
    """One page's lines that a framework's recognizer may read, kept as the store sorts them.

    `commanded`: job -> what its command tells (None: nothing); `tracks`: job -> the saved
    tracks' (framework, lines read) of its chief, to spare a job whose framework is unknown
    and whose first lines are read the work of keeping its lines."""

    commanded: Mapping[int, str | None]
    tracks: Mapping[int, tuple[str, int]]
    lines: dict[int, list[_Line]] = field(default_factory=dict)
    # (job, attempt) whose process reports the contract's events itself (vcp_callbacks).
    reported: set[tuple[int, int]] = field(default_factory=set)

    def reports_itself(self, job_id: int, attempt: int) -> None:
        """The attempt's process prints the contract's own events (a run_started of the
        callbacks' reporter): from now on its steps are those, and its framework's lines
        stay lines (read, they would be every step twice)."""
        if job_id in self.commanded and self.commanded[job_id] != registry.BUILTIN:
            self.reported.add((job_id, attempt))

    def offer(self, job_id: int, attempt: int, entry: LogEntry, message: str) -> None:
        keeps, framework = self.reading(job_id, entry.task_name)
        if not keeps or (framework is not None
                         and not registry.may_be_framework_line(message, framework)):
            return
        self.lines.setdefault(job_id, []).append(
            _Line(attempt, entry.task_name, entry, message))

    def reading(self, job_id: int, task_name: str) -> tuple[bool, str | None]:
        """Whether offer() may keep lines of this job's replica, and the framework whose
        markers a kept line holds (None: any line). It depends only on the job and the
        replica (the tracks are read once a page), so the store asks it once per replica
        and offers none of the lines of a replica it keeps nothing of."""
        framework = self.commanded.get(job_id)
        if framework == registry.BUILTIN or job_id not in self.commanded:
            return False, None
        if framework is None:
            detected, read = self.tracks.get(job_id, ("", 0))
            framework = detected or None
            # Until a framework is known only the chief's first lines are read (_read_group
            # stops at another replica's first line), so no other replica's are kept: a job
            # whose chief prints only events would otherwise lock and write its other
            # replicas' tracks on every page for nothing.
            if framework is None and (read >= DETECT_LINES or task_name != CHIEF):
                return False, None
        elif framework in detect.LAUNCHERS:
            detected, read = self.tracks.get(job_id, ("", 0))
            if detected and detected != framework:
                framework = detected  # what the launcher runs, told by its first lines
            elif read < DETECT_LINES:
                framework = None  # every line offered while its first lines may tell
        return True, framework


def commanded(jobs: Mapping[int, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]
              ) -> dict[int, str | None]:
    """job -> what its request or command tells (job -> (custom job, request))."""
    return {job_id: framework_of(custom_job, request)
            for job_id, (custom_job, request) in jobs.items()}


def saved_tracks(commanded_by_job: Mapping[int, str | None],
                 chiefs: Mapping[int, tuple[str, int]]) -> dict[int, tuple[str, int]]:
    """Of the chiefs' saved (framework, lines read) of a page's jobs (`chiefs`: over their
    attempts, a framework any of them found, else "", and the most lines read), those of the
    jobs whose command tells nothing or names only a launcher: the ones offer() reads."""
    return {job_id: chiefs[job_id] for job_id, framework in commanded_by_job.items()
            if job_id in chiefs and (framework is None or framework in detect.LAUNCHERS)}


@dataclass
class Read:
    """What a page's new framework lines mean: (job, attempt, entry, event) in order, and the
    steps to move, (job, insert_id, step): step lines stored while the framework's interval
    was a guess, placed again by what later lines told (hf_trainer.restep)."""

    events: list[tuple[int, int, LogEntry, ParsedEntry]] = field(default_factory=list)
    moves: list[tuple[int, str, int]] = field(default_factory=list)


def read_new(reader: Reader, new: set[tuple[Any, ...]] | None) -> Read:
    """Read each offered line new to the database (`new`: the (job, insert_id) of the stored
    lines that were; None: all were) with its framework's recognizer, in order; the tracks
    saved. Inside the store's transaction."""
    read = Read()
    groups: dict[tuple[int, int, str], list[_Line]] = {
        (job_id, attempt, CHIEF): [] for job_id, attempt in reader.reported}
    for job_id, lines in reader.lines.items():
        for line in lines:
            if new is None or (job_id, line.entry.insert_id) in new:
                groups.setdefault((job_id, line.attempt, line.replica), []).append(line)
    if not groups:
        return read
    tracks = _locked_tracks(groups)
    for key, lines in groups.items():
        job_id = key[0]
        # What the command says, else what the chief's first lines said (a replica other
        # than the chief never detects: it only follows).
        known = reader.commanded.get(job_id) or reader.tracks.get(job_id, ("", 0))[0] or None
        _read_group(tracks[key], known, lines, read, (job_id, key[1]) in reader.reported)
    row_updates.update_fields(tracks.values(), ["framework", "state", "lines_read"])
    return read


def _locked_tracks(groups: Mapping[tuple[int, int, str], Sequence[_Line]]
                   ) -> dict[tuple[int, int, str], FrameworkTrack]:
    """Each group's track, made where missing and locked until the transaction ends: two
    workers storing the same job's pages at once read its lines one after the other."""
    FrameworkTrack.objects.bulk_create(
        [FrameworkTrack(job_id=j, attempt=a, replica=r) for j, a, r in groups],
        ignore_conflicts=True)
    wanted = set(groups)
    found = FrameworkTrack.objects.select_for_update().filter(
        job_id__in={j for j, _, _ in groups}).order_by("pk")
    return {key: t for t in found
            if (key := (t.job_id, t.attempt, t.replica)) in wanted}


def _read_group(track: FrameworkTrack, known: str | None, lines: Sequence[_Line],
                read: Read, reported: bool) -> None:
    job = saved.from_json(track.state)
    pending = _pending(track.state)
    reported = reported or (isinstance(track.state, dict) and track.state.get(REPORTED) is True)
    framework = known or track.framework or None
    if known in detect.LAUNCHERS and track.framework:
        framework = track.framework  # what the launcher runs, told by the first lines
    chief = track.replica == CHIEF
    for line in lines:
        if framework is None:
            if not chief or track.lines_read >= DETECT_LINES:
                break
            track.lines_read += 1
            framework = detect.from_lines([line.message])
            if framework is None:
                continue
        elif framework in detect.LAUNCHERS and chief and track.lines_read < DETECT_LINES:
            # A launcher's script may say which framework it runs in its first lines (an
            # Accelerate loop's bar is read only once that is known).
            track.lines_read += 1
            framework = detect.from_start_lines([line.message]) or framework
        job.framework = framework
        states = redraws(line.message)
        for index, text in enumerate(states):
            found = registry.recognize(text, job)
            if found is None or not ((chief and not reported) or found.event in ANY_REPLICA):
                continue
            # Each redraw's event its own row: the entry's insertId, with the redraw's
            # place after it for all but the last.
            entry = line.entry if index == len(states) - 1 else dataclasses.replace(
                line.entry, insert_id=f"{line.entry.insert_id}~{index}")
            fields = dict(found.fields)
            counted = fields.pop("counted", None)
            if counted is not None and found.event in PLACED_AGAIN:
                pending.append([entry.insert_id, fields["step"], counted])
            read.events.append((track.job_id, line.attempt, entry,
                                ParsedEntry(message=text, event=found.event, fields=fields)))
    pending = _placed(job, pending, track.job_id, read)
    track.framework = framework or ""
    track.state = {**saved.to_json(job), PENDING: pending[-MAX_PENDING:], REPORTED: reported}


def redraws(message: str) -> list[str]:
    """The states of a line a progress bar redrew in place (tqdm writes a carriage return
    before each redraw and a newline only at the end of the bar, so Cloud Logging keeps a
    whole epoch of redraws as one entry): each one, oldest first, at most MAX_REDRAWS of them
    evenly spaced, the last always; a line without carriage returns is its own one state. A
    line another writer printed into the bar's last state (a loop's logger, while the bar
    waits for its newline) is a state of its own after the bar's."""
    if "\r" not in message:
        return loop_bar.split_bar(message)
    states = [part for part in message.split("\r") if part.strip()]
    if len(states) > MAX_REDRAWS:
        stride = -(-len(states) // MAX_REDRAWS)
        kept = states[::stride]
        states = kept if kept[-1] is states[-1] else [*kept, states[-1]]
    if not states:
        return [message]
    return [*states[:-1], *loop_bar.split_bar(states[-1])]


def _pending(state: object) -> list[list[Any]]:
    kept = state.get(PENDING) if isinstance(state, dict) else None
    return [list(p) for p in kept or [] if isinstance(p, list) and len(p) == 3
            and isinstance(p[0], str) and type(p[1]) is int]


def _placed(job: registry.JobState, pending: list[list[Any]], job_id: int,
            read: Read) -> list[list[Any]]:
    """The estimated steps moved where the recognizer now places them; those still a guess."""
    still = []
    for insert_id, step, counted in pending:
        placed = registry.restep(job, counted)
        if placed is None:
            continue
        where, exact = placed
        if where != step:
            read.moves.append((job_id, insert_id, where))
        if not exact:
            still.append([insert_id, where, counted])
    return still


# How the job page names each framework (registry.FRAMEWORKS' keys).
LABELS = {"hf_trainer": "Hugging Face Trainer", "accelerate": "Accelerate",
          "deepspeed": "DeepSpeed", "torchtitan": "torchtitan", "lightning": "PyTorch Lightning",
          "torchrun": "torchrun", "maxtext": "MaxText"}


def report(job: Job) -> dict[str, str] | None:
    """The framework a job's steps are read from, for its page: its name, label and how it
    was told (the command, or the first lines); None for the product's own trainers and a
    job nothing tells."""
    named = (job.request or {}).get("framework")
    told = framework_of(job.custom_job, job.request)
    how = "named by the job's request" if named == told else "told by the job's command"
    if told is None or told in detect.LAUNCHERS:
        launcher = told
        told = FrameworkTrack.objects.filter(job=job, replica=CHIEF).exclude(
            framework__in=("", launcher or "")).values_list("framework", flat=True).first()
        how = "told by the job's first lines"
        if launcher is not None:
            how += f" (started by {LABELS.get(launcher, launcher)})"
            told = told or launcher
            if told == launcher:
                how = "told by the job's command"
    if told is None or told not in LABELS:
        return None
    return {"name": told, "label": LABELS[told], "how": how}


def seed(job: Job, framework: str, job_state: registry.JobState) -> None:
    """Start a new job's chief track from what is known before its first line (a resumed HF
    Trainer run's interval and total, from its checkpoint's trainer_state.json)."""
    job_state.framework = framework
    FrameworkTrack.objects.update_or_create(
        job=job, attempt=1, replica=CHIEF,
        defaults={"framework": framework, "state": saved.to_json(job_state)})
