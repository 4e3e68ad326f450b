"""decide(state): which waiting jobs start now, which borrowing jobs stop at their next
checkpoint, and why each other job waits and where. Pure and stateless: everything it knows
is in the State, so any worker may call it and two calls on one state agree.

The order of the queue: jobs that stay within their team's guarantee before jobs that borrow;
then priority (high first); then the team's fair share, lowest first (its dominant resource
share over the flavors the job asks for: the accelerators the team held on average over the
window plus those it holds now, in units of its guarantee); then age. Each job is tried in
that order and starts if it fits, so no job ever goes ahead of a higher-priority job that
fits (of the same standing: a job within its team's guarantee goes before a borrower, as
Kueue orders its heads, else the borrower would start only to be stopped at once); a job
that does not fit lets smaller ones behind it use the capacity (backfill). A job that has
waited `reserve_after_s` (6 h by default; counted from its requeue for a job stopped for
another) goes first in its team and (State.starving_orders_teams, on by default) in the
cohort, and holds its flavors (EASY backfill: jobs that end before it could start, or fit
beside it, still start; accelerators of jobs already stopping count as returning); held back
by its own team instead (no room in its guarantee for a job without checkpoints, or the team
at its ceiling), it holds its team's room. A job that can stop at a checkpoint may start on
a hold even when its limit runs past it (State.backfill_until_checkpoint), so held
accelerators do not idle: as soon as stopping the jobs started on the hold would free enough,
they are asked to stop for the held job. So a starving job waits at most for the jobs
running as it began to starve (and for any job starving before it) to end, and then one
checkpoint.

A job that would stay within its team's guarantee but finds the capacity lent to other teams
takes it back: first from jobs already stopping, then by asking borrowing jobs to stop at
their next checkpoint, the lowest priority first and, at one priority, the one started last.
A job without checkpoints is asked only when its team's policy allows losing work; the loss is
in the Preemption. No job is asked to stop unless enough would be freed for the waiting one.
A borrowing job of a team below its fair share may likewise ask borrowing jobs of no higher
priority, of teams that stay above its team's share, to stop (fair_preemption). A job without
checkpoints runs only within its team's guarantee (it could not be stopped for another's).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

from vertexplan.fairshare.model import (
    Decisions,
    Flavor,
    Job,
    Preemption,
    Refusal,
    State,
    TooBig,
    Waiting,
    check_fits_project,
    rank,
)

INF = float("inf")


@dataclass
class _Hold:
    job_id: str
    until: float  # the latest the held job starts; now: held outright
    extra: int    # accelerators left beside it then
    # A job that stops at a checkpoint may start on the hold, to be stopped for the held job
    # (State.backfill_until_checkpoint; not for a job waiting on jobs already stopping).
    until_checkpoint: bool = False

    def lets(self, job: Job, n: int, now: float) -> bool:
        """Whether `job` may start beside the hold: it ends before the held job could start,
        fits in what will be left beside it, or can be stopped at a checkpoint for it."""
        return ((job.limit_s is not None and now + job.limit_s <= self.until)
                or n <= self.extra or (self.until_checkpoint and _stoppable(job)))


class _Book:
    """What is held, per flavor and per team, as decisions are made in one call."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.used: dict[Flavor, int] = defaultdict(int)
        self.team_used: dict[str, dict[Flavor, int]] = defaultdict(lambda: defaultdict(int))
        # Accelerators that jobs already asked to stop will give back, not yet promised.
        self.returning: dict[Flavor, int] = defaultdict(int)
        self.running = [job for job in state.running]
        for job in state.running:
            self._hold(job)
            if job.stopping:
                for flavor, n in job.demand.items():
                    self.returning[flavor] += n
        guarantees: dict[Flavor, int] = defaultdict(int)
        for quotas in state.quotas.values():
            for flavor, quota in quotas.items():
                guarantees[flavor] += quota.guarantee
        self.guarantees = guarantees
        self.held_for: dict[Flavor, _Hold] = {}  # flavor -> the waiting job it is kept for
        self.admitted: set[str] = set()  # started in this round: never stopped in it
        # (team, flavor) -> the starving job of the team its room is kept for
        self.team_held: dict[tuple[str, Flavor], str] = {}

    def _hold(self, job: Job) -> None:
        for flavor, n in job.demand.items():
            self.used[flavor] += n
            self.team_used[job.team][flavor] += n

    def pool(self, flavor: Flavor) -> tuple[float, str]:
        """What the cohort may hold at once of a flavor, and where that limit comes from."""
        quota = self.state.project_quota.get(flavor)
        if quota is not None:
            return quota, "the project's Vertex quota"
        if self.guarantees.get(flavor):
            return self.guarantees[flavor], "the teams' guarantees (no project quota known)"
        return INF, ""

    def within_guarantee(self, job: Job) -> bool:
        return all(self.team_used[job.team][f] + n <= self.state.quota(job.team, f).guarantee
                   for f, n in job.demand.items())

    def share(self, team: str, flavors, extra: int = 0) -> float:
        """The team's dominant share among the given flavors: the accelerators it held on
        average over the window plus those it holds now (and `extra` more; weighed by
        State.held_now_weight), over its guarantee. A job competes for the flavors it asks
        for, so only those count."""
        usage = self.state.usage.get(team, {})
        best = 0.0
        for flavor in flavors:
            held = (usage.get(flavor, 0.0) / self.state.window_s + self.state.held_now_weight
                    * (self.team_used[team][flavor] + extra * (flavor in flavors)))
            if held > 0:
                # A team without a guarantee of a flavor ranks after every team with one.
                best = max(best, held / (self.state.quota(team, flavor).guarantee or 1e-6))
        return best

    def key(self, job: Job) -> tuple:
        """The order across teams, of each team's next job. A starving job goes first across
        teams too unless State.starving_orders_teams is off: then it goes first in its team
        only, and its team waits its turn by share (it still holds what it needs)."""
        if self.starving(job) and self.state.starving_orders_teams:
            return (0, job.waiting_since(), job.id)
        return (1, not self.within_guarantee(job), -rank(job.priority),
                self.share(job.team, job.demand), job.submitted_at, job.id)

    def starving(self, job: Job) -> bool:
        after = self.state.reserve_after_s
        return after is not None and self.state.now - job.waiting_since() >= after

    def on_hold(self, running: Job, held: Job) -> bool:
        """Whether `running` started on the hold kept for the starving job `held`: after
        `held` began to starve, and able to stop at a checkpoint, so it may be asked to. The
        state keeps no record of how a job started, so one that started then beside the hold
        (fitting in what was left, or ending before) counts too: it may be the one asked to
        stop, never more than the held job is short of."""
        after = self.state.reserve_after_s
        return (self.state.backfill_until_checkpoint and after is not None
                and running.started_at is not None and _stoppable(running)
                and running.started_at >= held.waiting_since() + after)

    def obstacle(self, job: Job) -> tuple[str, str] | None:
        """Why the job cannot start now, as (kind, reason); None when it can."""
        # A held flavor first: a job held back never asks anyone to stop.
        for flavor, n in sorted(job.demand.items()):
            hold = self.held_for.get(flavor)
            if hold is not None and not hold.lets(job, n, self.state.now):
                later = hold.until - self.state.now
                return "held", (f"{flavor.label()} is held for job {hold.job_id}, ahead in the "
                                f"queue" + (f", which can start within {later / 3600:.1f} h: "
                                            f"this job's time limit runs past that"
                                            if 0 < later < INF else ""))
        for flavor in sorted(job.demand):
            holder = self.team_held.get((job.team, flavor))
            if holder is not None and holder != job.id:
                return "held", (f"team {job.team}'s room of {flavor.label()} is held for its "
                                f"job {holder}, which has waited longest")
        for flavor, n in sorted(job.demand.items()):
            quota = self.state.quota(job.team, flavor)
            mine = self.team_used[job.team][flavor]
            if mine + n > quota.ceiling:
                return "team", (f"team {job.team} would hold {mine + n} {flavor.label()}, over "
                                f"its guarantee {quota.guarantee} + borrowing limit "
                                f"{quota.borrowing_limit} (it holds {mine})")
            if not _stoppable(job) and self.guarantees.get(flavor) and \
                    mine + n > quota.guarantee:
                return "team", (f"a job without checkpoints runs only within its team's "
                                f"guarantee (it could not be stopped for another team's): "
                                f"team {job.team} holds {mine} of its {quota.guarantee} "
                                f"{flavor.label()}, the job needs {n}")
            pool, source = self.pool(flavor)
            if self.used[flavor] + n > pool:
                return "capacity", (f"{self.used[flavor]} of {pool:g} {flavor.label()} in use "
                                    f"({source}); the job needs {n}")
        return None

    def admit(self, job: Job) -> None:
        self._hold(job)
        for flavor, n in job.demand.items():
            hold = self.held_for.get(flavor)
            if hold is not None and self.state.now + (job.limit_s or INF) > hold.until:
                hold.extra -= n  # started beside the held job, not before it
        self.running.append(replace(job, started_at=self.state.now))
        self.admitted.add(job.id)

    def shadow(self, job: Job, flavor: Flavor) -> _Hold:
        """When the running jobs' time limits let `job` start on `flavor` at the latest, and
        how many accelerators are left beside it then: jobs that end before that, or that fit
        in what is left, may start meanwhile (EASY backfill). Without every limit known: held
        outright. A job already asked to stop returns its accelerators at its next checkpoint,
        whatever its limit: they count as coming back now, so no job is let through on the
        strength of a limit that will not hold them."""
        need = job.demand[flavor]
        pool, _ = self.pool(flavor)
        free = pool - self.used[flavor]
        ends = []
        for running in self.running:
            n = running.demand.get(flavor, 0)
            if not n:
                continue
            if running.stopping or self.on_hold(running, job):
                # Returning at its next checkpoint, or stoppable for this job.
                free += n
                continue
            if running.limit_s is None or running.started_at is None:
                return _Hold(job.id, self.state.now, 0)
            ends.append((running.started_at + running.limit_s, n))
        until = self.state.now
        for end, n in sorted(ends):
            if free >= need:
                break
            free, until = free + n, max(until, end)
        if free < need:
            return _Hold(job.id, self.state.now, 0)
        return _Hold(job.id, until, int(free - need))

    def shortfall(self, job: Job) -> dict[Flavor, int]:
        out = {}
        for flavor, n in job.demand.items():
            pool, _ = self.pool(flavor)
            short = self.used[flavor] + n - pool
            if short > 0:
                out[flavor] = int(short)
        return out

    def reclaim(self, job: Job, mode: str) -> tuple[list[Preemption], bool, bool]:
        """Take back lent capacity: promise the job what stopping jobs return, and pick
        borrowing jobs of other teams to stop for the rest. For a job within its guarantee
        (mode "guarantee"), any of them; for a job that has waited `reserve_after_s`
        ("starving"), those of no higher priority, and ("hold", State.backfill_until_checkpoint)
        first the jobs that started on its hold, of any team and priority; otherwise ("fair")
        only those of no higher priority, of teams whose share stays above the job's team's
        once the job runs, so two teams never take turns. (preemptions, enough, whether
        returning accelerators were promised)."""
        hold = mode == "hold"
        need = self.shortfall(job)
        promised = {f: min(self.returning[f], n) for f, n in need.items()}
        short = {f: n - promised[f] for f, n in need.items() if n > promised[f]}
        victims: list[Job] = []
        lent = {t: dict(used) for t, used in self.team_used.items()}
        candidates = sorted(
            (j for j in self.running
             if not j.stopping and j.id not in self.admitted
             and ((hold and self.on_hold(j, job)) or (j.team != job.team and _stoppable(j)))),
            # Jobs started on this job's hold first: they had the accelerators on loan.
            key=lambda j: (not (hold and self.on_hold(j, job)), rank(j.priority),
                           -(j.started_at or 0.0), j.id))
        for candidate in candidates:
            if not short:
                break
            helps = [f for f in short if candidate.demand.get(f)]
            # A job started on this job's hold stops for it whatever its team, priority or
            # share; any other only as a borrower the mode lets it stop.
            if not helps or not ((hold and self.on_hold(candidate, job))
                                 or self._may_stop(candidate, job, mode, helps, lent)):
                continue
            victims.append(candidate)
            for flavor, n in candidate.demand.items():
                lent[candidate.team][flavor] -= n
                if flavor in short:
                    short[flavor] -= n
            short = {f: n for f, n in short.items() if n > 0}
        if short:
            # Not enough even with every borrower stopped: stop none, and leave what stopping
            # jobs return to the next job in the queue.
            return [], False, False
        for flavor, n in promised.items():
            self.returning[flavor] -= n
        for victim in victims:
            for flavor, n in victim.demand.items():
                self.returning[flavor] += n
        for flavor, n in need.items():
            # Freed beyond this job's need stays free for the next one.
            self.returning[flavor] -= min(self.returning[flavor], n - promised[flavor])
        stopping = {v.id for v in victims}
        self.running = [j for j in self.running if j.id not in stopping] + [
            replace(v, stopping=True) for v in victims]
        preemptions = [
            Preemption(v.id, job.id, 0.0 if v.checkpointing else
                       (self.state.now - (self.state.now if v.started_at is None else v.started_at))
                       * v.total())
            for v in victims]
        return preemptions, True, any(promised.values())

    def _may_stop(self, candidate: Job, job: Job, mode: str, helps: list[Flavor],
                  lent: dict[str, dict[Flavor, int]]) -> bool:
        """Whether borrowing `candidate` may be asked to stop for `job` in this mode."""
        if not any(lent[candidate.team].get(f, 0) > self.state.quota(candidate.team, f).guarantee
                   for f in helps):
            return False  # not borrowing any of what the job is short of
        if mode != "guarantee" and rank(candidate.priority) > rank(job.priority):
            return False
        return not (mode == "fair" and self._share_after(
            candidate.team, helps, lent, -candidate.total())
            <= self.share(job.team, job.demand, job.total()))

    def _share_after(self, team: str, flavors, lent: dict[str, dict[Flavor, int]],
                     extra: int) -> float:
        saved = self.team_used[team]
        self.team_used[team] = defaultdict(int, lent[team])
        try:
            return self.share(team, flavors, extra)
        finally:
            self.team_used[team] = saved

    def earliest(self, job: Job) -> float | None:
        """The soonest the job could start by the running jobs' time limits alone (the jobs
        ahead of it in the queue may take longer); None when a limit is not known, or the
        project's quota could never hold it."""
        latest = self.state.now
        for flavor, need in job.demand.items():
            pool, _ = self.pool(flavor)
            free = pool - self.used[flavor]
            ends = []
            for running in self.running:
                n = running.demand.get(flavor, 0)
                if n and (running.limit_s is None or running.started_at is None):
                    return None
                if n:
                    ends.append((running.started_at + running.limit_s, n))
            for end, n in sorted(ends):
                if free >= need:
                    break
                free, latest = free + n, max(latest, end)
            if free < need:
                return None
        return latest

    def hold_for(self, job: Job, *, backfill: bool = False) -> None:
        """Keep the job's flavors for it: strictly (it waits for jobs stopping at a
        checkpoint), or letting jobs through that end before it could start anyway."""
        for flavor in job.demand:
            if flavor not in self.held_for:
                self.held_for[flavor] = (
                    replace(self.shadow(job, flavor),
                            until_checkpoint=self.state.backfill_until_checkpoint)
                    if backfill else _Hold(job.id, self.state.now, 0))


def _stoppable(job: Job) -> bool:
    return job.checkpointing or job.may_lose_work


def check_fits_guarantee(job: Job, state: State) -> None:
    """Raise TooBig for a job without checkpoints (and a team that keeps its work) bigger
    than its team's guarantee of a flavor the teams hold guarantees of: it may not borrow, so
    it could never start."""
    if _stoppable(job):
        return
    for flavor, n in sorted(job.demand.items()):
        guarantee = state.quota(job.team, flavor).guarantee
        guaranteed = any(q.get(flavor) and q[flavor].guarantee for q in state.quotas.values())
        if guaranteed and n > guarantee:
            raise TooBig(flavor, n, guarantee, what=(
                f"team {job.team}'s guarantee, and a job without checkpoints may not borrow; "
                f"turn on checkpointing or"))


def decide(state: State) -> Decisions:
    out = Decisions()
    book = _Book(state)
    queues: dict[str, list[Job]] = defaultdict(list)
    for job in state.waiting:
        try:
            check_fits_project(job.demand, state.project_quota)
            check_fits_guarantee(job, state)
        except TooBig as err:
            out.refused.append(Refusal(job.id, str(err)))
            continue
        queues[job.team].append(job)
    for jobs in queues.values():
        # A team's own order is the global one: its starving jobs first, longest waiting first.
        jobs.sort(key=lambda j: (not book.starving(j), j.waiting_since() if book.starving(j)
                                 else 0.0, -rank(j.priority), j.submitted_at, j.id),
                  reverse=True)
    still: list[Waiting] = []
    while queues:
        team = min(queues, key=lambda t: book.key(queues[t][-1]))
        job = queues[team].pop()
        if not queues[team]:
            del queues[team]
        found = book.obstacle(job)
        if found is None:
            book.admit(job)
            out.admit.append(job.id)
            continue
        kind, reason = found
        guaranteed, enough = book.within_guarantee(job), False
        starving = book.starving(job)
        modes = ["guarantee"] if guaranteed else (
            (["fair"] if state.fair_preemption else [])
            + ([("hold" if state.backfill_until_checkpoint else "starving")] if starving else []))
        for mode in modes if kind == "capacity" else []:
            preemptions, enough, promised = book.reclaim(job, mode)
            if enough:
                out.preempt.extend(preemptions)
                book.hold_for(job)
                parts = []
                if preemptions:
                    parts.append(f"job {', '.join(p.job_id for p in preemptions)} (borrowing) "
                                 f"to stop at its next checkpoint")
                if promised:
                    parts.append("accelerators returned by jobs stopping at a checkpoint")
                why = {"guarantee": f"within team {job.team}'s guarantee",
                       "fair": f"team {job.team} is below its fair share",
                       "starving": "waited longest", "hold": "waited longest"}[mode]
                reason = f"{why}: waiting for {' and '.join(parts)}"
                break
        if kind == "team" and starving and state.hold_when_starving:
            # Held back by its own team's jobs (no room in the guarantee for a job without
            # checkpoints, or the team at its ceiling): the team's next jobs of these flavors
            # would take the room as it frees, so they wait behind it.
            for flavor in job.demand:
                book.team_held.setdefault((job.team, flavor), job.id)
            reason += f"; team {job.team}'s room is now held for it"
        if kind == "capacity" and not enough and starving and state.hold_when_starving:
            book.hold_for(job, backfill=True)
            reason += "; its accelerators are now held for it"
        still.append(Waiting(job.id, 0, reason, book.earliest(job)))
    out.waiting = [replace(w, place=place) for place, w in enumerate(still, 1)]
    return out
