"""Fair share between teams, simulated: a week of contention through the very `decide` the
control plane runs (vertexplan.fairshare), no processes, no database.

    python -m bench.fair_share [--seed 38] [--days 7] [--users 11,11,14,11]
                               [--workload contention|one-job] [--jobs-per-user N]

Two flavors, as one Google Cloud project has them: 64 A100 on-demand in us-central1 and 32
H100 on spot. Four teams hold guarantees of 24/16/16/8 A100 and 8 H100 each and may borrow
the whole rest of the cohort. Each team has a number of users (--users), a closed loop: a user
submits the next job of their recorded list when one ends (or is refused), so the queue stays
finite. The workload (--workload):
  contention  (the default) each user asks for one flavor only, a team's users split between
              the flavors in the proportion of its guarantees (at least one each), and keeps
              2 jobs submitted: every team asks for more than its guarantee of each flavor
              nearly all the time (the bench prints the fraction: `contended`).
  one-job     each user keeps one job of either flavor (drawn per job in that proportion), the
              workload before: a team whose jobs wait on one flavor often asks less than its
              guarantee of the other (in a run of seed 1, team b had no H100 job for 30 h).
The lists are drawn once from the seeded RNG: a shape (1, 2, 4, 8 or 16 accelerators, small ones
most often), a duration (log-normal, median 1.5 h, at most 24 h), a priority (10% high, 20% low)
and whether it checkpoints (90%).

The simulation moves from event to event (a submission, an end, a job reaching its checkpoint
after being asked to stop, which takes up to 30 minutes) and calls decide() after each; a
stopped job is requeued with the work it has left and its first submission time. The usage
decide() weighs is accelerator-seconds per team over the last 24 h, in hourly buckets.

Figures, each beside its reference:
  share       each team's accelerator-hours of a flavor over the week as a fraction of the
              flavor's, beside its entitlement, demand-aware: at each moment the project's
              quota of the flavor water-filled by guarantee weight, none over what the team's
              jobs (running and waiting) ask for (vertexplan.fairshare.entitlement, as Kueue's
              fair sharing and DRF's evaluation count it), integrated over the week. The
              deviation is |share / entitlement - 1| (goal: <= 5%). Beside it, labelled, the
              figure before: the entitlement as guarantee / the guarantees' sum whatever the
              team asked. The same trace run first come, first served (what Vertex's queue
              does today) is shown beside it, against its own demand-aware entitlement. Per
              team: the time it contended (asked for more than its guarantee), how far on
              average it asked for less, and the accelerators it held on average.
  utilisation accelerators held / the project's quota, over the time any job of the flavor
              waits (goal: >= 95%).
  wait        from submission (or requeue) to start; the longest beside its bound: a job
              holds its flavors (or its team's room) once it has waited
              State.reserve_after_s (6 h by default), and then starts at the latest when the
              jobs running then have ended, the longest of which runs 24 h, and the jobs
              started on its hold have reached a checkpoint (30 minutes): 30.5 h.
The last line reads `max share deviation X%, utilisation while waiting Y%, longest wait Z h`.
"""

from __future__ import annotations

import argparse
import heapq
import math
import random
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace

from vertexplan.fairshare import Decisions, Flavor, Job, State, TeamQuota, decide
from vertexplan.fairshare.entitlement import water_fill

A100 = Flavor("NVIDIA_TESLA_A100", "us-central1")
H100_SPOT = Flavor("NVIDIA_H100_80GB", "us-central1", spot=True)
PROJECT = {A100: 64, H100_SPOT: 32}
GUARANTEES = {"a": {A100: 24, H100_SPOT: 8}, "b": {A100: 16, H100_SPOT: 8},
              "c": {A100: 16, H100_SPOT: 8}, "d": {A100: 8, H100_SPOT: 8}}
A100_FRACTION = {team: g[A100] / sum(g.values()) for team, g in GUARANTEES.items()}
SHAPES = (1, 2, 4, 8, 16)
SHAPE_WEIGHTS = (30, 25, 20, 15, 10)
HOUR = 3600.0
WINDOW_S = 24 * HOUR
CHECKPOINT_EVERY_S = 30 * 60.0
LONGEST_S = 24 * HOUR
LIMIT_CAP_S = 48 * HOUR
SHARE_GOAL, UTILISATION_GOAL = 0.05, 0.95


@dataclass
class Recorded:
    flavor: Flavor
    count: int
    duration_s: float
    priority: str
    checkpointing: bool
    limit_s: float  # its timeout, as the user set it: the longest it may run


def user_flavors(team: str, count: int) -> list[Flavor]:
    """The contention workload's users of a team, each bound to one flavor: split in the
    proportion of the team's guarantees (largest remainder), at least one per flavor."""
    h100 = max(1, min(count - 1, round(count * (1 - A100_FRACTION[team]))))
    return [A100] * (count - h100) + [H100_SPOT] * h100


def record(seed: int, users: dict[str, int], days: float, workload: str = "contention",
           jobs_per_user: int = 1) -> dict[tuple[str, int], list[Recorded]]:
    """Each user's list of jobs, long enough for the week (drawn once, from the seed)."""
    rng, limits = random.Random(seed), random.Random(seed + 1)
    lists = {}
    for team, count in sorted(users.items()):
        bound = user_flavors(team, count) if workload == "contention" else [None] * count
        for user in range(count):
            jobs = []
            # More than the run's jobs of >= 1 h median, for each job the user keeps (a
            # short run's users may be lucky: at least 64 each).
            for _ in range(max(64, int(days * 24)) * jobs_per_user):
                # A team asks for each flavor in the proportion of its guarantees: each of
                # its users for one (contention), or each job drawn (one-job).
                pick = rng.random()
                flavor = bound[user] or (A100 if pick < A100_FRACTION[team] else H100_SPOT)
                shape = rng.choices(SHAPES, SHAPE_WEIGHTS)[0]
                duration = min(LONGEST_S, max(300.0, rng.lognormvariate(math.log(1.5 * HOUR), 0.9)))
                roll = rng.random()
                priority = "high" if roll < 0.1 else "low" if roll < 0.3 else "normal"
                # Timeouts as people set them: a whole number of hours, well above the run
                # (drawn apart, so the jobs are the same with or without them).
                limit = min(LIMIT_CAP_S,
                            math.ceil(duration * limits.uniform(1.2, 2.5) / HOUR) * HOUR)
                jobs.append(Recorded(flavor, shape, duration, priority, rng.random() < 0.9,
                                     limit))
            lists[(team, user)] = jobs
    return lists


@dataclass
class Live:
    job: Job
    user: tuple[str, int]
    left_s: float
    queued_at: float
    run: int = 0  # events of an earlier run of a requeued job are stale


@dataclass
class Outcome:
    held_s: dict[str, dict[Flavor, float]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(float)))
    waiting_s: dict[Flavor, float] = field(default_factory=lambda: defaultdict(float))
    waiting_held_s: dict[Flavor, float] = field(default_factory=lambda: defaultdict(float))
    waits_s: list[float] = field(default_factory=list)
    started: int = 0
    preempted: int = 0
    refused: int = 0
    over_quota: int = 0
    # Accelerator-seconds by which a team's own jobs of a flavor (running and waiting) fell
    # short of its guarantee: capacity it did not ask for, which no order can give it back.
    unasked_s: dict[str, dict[Flavor, float]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(float)))
    # Accelerator-seconds each team was entitled to, demand-aware (water_fill of the
    # project's quota by guarantee weights, none over what the team asked), and the seconds
    # its own jobs of the flavor asked for more than its guarantee (it was contending).
    entitled_s: dict[str, dict[Flavor, float]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(float)))
    contended_s: dict[str, dict[Flavor, float]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(float)))
    span_s: float = 0.0
    decide_s: float = 0.0


Policy = Callable[[State], Decisions]


def first_come(state: State) -> Decisions:
    """The reference: no teams, no priorities; in order of submission while jobs fit."""
    used: dict[Flavor, int] = defaultdict(int)
    for job in state.running:
        for flavor, n in job.demand.items():
            used[flavor] += n
    out = Decisions()
    for job in sorted(state.waiting, key=lambda j: (j.submitted_at, j.id)):
        if all(used[f] + n <= state.project_quota[f] for f, n in job.demand.items()):
            for flavor, n in job.demand.items():
                used[flavor] += n
            out.admit.append(job.id)
    return out


def simulate(lists: dict[tuple[str, int], list[Recorded]], days: float,
             policy: Policy = decide, jobs_per_user: int = 1,
             options: dict[str, object] | None = None) -> Outcome:
    """The week, through `policy`; `options`: State fields as the control plane could set
    them (e.g. starving_orders_teams)."""
    end = days * 24 * HOUR
    quotas = {team: {f: TeamQuota(g, PROJECT[f] - g) for f, g in flavors.items()}
              for team, flavors in GUARANTEES.items()}
    out = Outcome()
    events: list[tuple[float, int, str, str, int]] = []  # (time, seq, kind, job id, run)
    seq = 0
    waiting: dict[str, Live] = {}
    running: dict[str, Live] = {}
    next_of = {user: 0 for user in lists}
    buckets: dict[str, deque] = {team: deque() for team in GUARANTEES}  # (hour, {flavor: s})
    now = 0.0

    def push(at: float, kind: str, live: Live) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(events, (at, seq, kind, live.job.id, live.run))

    def submit(user: tuple[str, int], at: float) -> None:
        i = next_of[user]
        next_of[user] += 1
        r = lists[user][i]
        job_id = f"{user[0]}{user[1]}-{i}"
        job = Job(job_id, user[0], {r.flavor: r.count}, r.priority, at, r.checkpointing,
                  limit_s=r.limit_s)
        waiting[job_id] = Live(job, user, r.duration_s, at)

    def account(until: float) -> None:
        """Accelerator-seconds held from `now` to `until`: per team, and while jobs wait."""
        span = until - now
        if span <= 0:
            return
        held: dict[Flavor, int] = defaultdict(int)
        for live in running.values():
            for flavor, n in live.job.demand.items():
                out.held_s[live.job.team][flavor] += n * span
                held[flavor] += n
                hour = int(now // HOUR)
                team_buckets = buckets[live.job.team]
                if not team_buckets or team_buckets[-1][0] != hour:
                    team_buckets.append((hour, defaultdict(float)))
                team_buckets[-1][1][flavor] += n * span
        for flavor in PROJECT:
            if any(flavor in live.job.demand for live in waiting.values()):
                out.waiting_s[flavor] += span
                out.waiting_held_s[flavor] += held[flavor] * span
            out.over_quota += held[flavor] > PROJECT[flavor]
        asked: dict[tuple[str, Flavor], int] = defaultdict(int)
        for live in (*running.values(), *waiting.values()):
            for flavor, n in live.job.demand.items():
                asked[live.job.team, flavor] += n
        for team, flavors in GUARANTEES.items():
            for flavor, guarantee in flavors.items():
                out.unasked_s[team][flavor] += max(0, guarantee - asked[team, flavor]) * span
                out.contended_s[team][flavor] += span * (asked[team, flavor] > guarantee)
        for flavor, capacity in PROJECT.items():
            entitled = water_fill(capacity, {t: asked[t, flavor] for t in GUARANTEES},
                                  {t: g[flavor] for t, g in GUARANTEES.items()})
            for team, n in entitled.items():
                out.entitled_s[team][flavor] += n * span
        out.span_s += span

    def usage() -> dict[str, dict[Flavor, float]]:
        oldest = int(now // HOUR) - int(WINDOW_S // HOUR)
        total: dict[str, dict[Flavor, float]] = {}
        for team, team_buckets in buckets.items():
            while team_buckets and team_buckets[0][0] < oldest:
                team_buckets.popleft()
            sums: dict[Flavor, float] = defaultdict(float)
            for _, flavors in team_buckets:
                for flavor, s in flavors.items():
                    sums[flavor] += s
            total[team] = sums
        return total

    for user in lists:
        for _ in range(jobs_per_user):
            submit(user, 0.0)
    rng = random.Random(1)  # where in its checkpoint interval a stopped job is
    while now < end:
        state = State(now=now, quotas=quotas, project_quota=PROJECT,
                      running=[live.job for live in running.values()],
                      waiting=[live.job for live in waiting.values()],
                      usage=usage(), window_s=WINDOW_S, **(options or {}))
        started = time.perf_counter()
        decisions = policy(state)
        out.decide_s += time.perf_counter() - started
        for job_id in decisions.admit:
            live = waiting.pop(job_id)
            live.job = replace(live.job, started_at=now)
            out.waits_s.append(now - live.queued_at)
            out.started += 1
            running[job_id] = live
            push(now + live.left_s, "end", live)
        for refusal in decisions.refused:
            # Refused at submission in the control plane: the user goes on with the next.
            submit(waiting.pop(refusal.job_id).user, now)
            out.refused += 1
        for preemption in decisions.preempt:
            live = running[preemption.job_id]
            live.job = replace(live.job, stopping=True)
            push(now + rng.uniform(0, CHECKPOINT_EVERY_S), "stop", live)
            out.preempted += 1
        if not events:
            break
        at = min(events[0][0], end)
        account(at)
        now = at
        while events and events[0][0] <= now:
            _, _, kind, job_id, run = heapq.heappop(events)
            live = running.get(job_id)
            if live is None or live.run != run:
                continue  # an event of a run that already ended
            del running[job_id]
            if kind == "end":
                submit(live.user, now)
                continue
            live.left_s -= now - live.job.started_at  # it saved at the checkpoint: no loss
            # Requeued as the control plane does: its first submission kept for its age,
            # the time it stopped as when it began to wait again.
            live.job = replace(live.job, started_at=None, stopping=False, queued_at=now)
            live.queued_at = now
            live.run += 1
            waiting[job_id] = live
    return out


@dataclass
class Figures:
    deviation: float         # from the demand-aware entitlement: the goal's figure
    static_deviation: float  # from guarantee / the guarantees' sum, whatever teams asked
    shares: dict[str, dict[Flavor, float]]
    entitled: dict[str, dict[Flavor, float]]  # demand-aware, as a fraction of the flavor's
    utilisation: float
    longest_wait_h: float


def static_entitlement(team: str, flavor: Flavor) -> float:
    return GUARANTEES[team][flavor] / sum(GUARANTEES[t][flavor] for t in GUARANTEES)


def figures(out: Outcome) -> Figures:
    shares: dict[str, dict[Flavor, float]] = {}
    entitled: dict[str, dict[Flavor, float]] = {}
    deviation = static = 0.0
    for flavor in PROJECT:
        total = sum(out.held_s[team][flavor] for team in GUARANTEES)
        owed = sum(out.entitled_s[team][flavor] for team in GUARANTEES)
        for team in GUARANTEES:
            share = out.held_s[team][flavor] / total if total else 0.0
            due = out.entitled_s[team][flavor] / owed if owed else 0.0
            shares.setdefault(team, {})[flavor] = share
            entitled.setdefault(team, {})[flavor] = due
            if due:
                deviation = max(deviation, abs(share / due - 1))
            static = max(static, abs(share / static_entitlement(team, flavor) - 1))
    utilisation = min(
        out.waiting_held_s[f] / (out.waiting_s[f] * PROJECT[f]) if out.waiting_s[f] else 1.0
        for f in PROJECT)
    return Figures(deviation, static, shares, entitled, utilisation,
                   max(out.waits_s, default=0.0) / HOUR)


def _reserve_after_s() -> float:
    """The wait after which decide() holds capacity for a job: State's default, as the
    control plane runs it."""
    return next(f.default for f in fields(State) if f.name == "reserve_after_s")


def parse_users(text: str) -> dict[str, int]:
    counts = [int(x) for x in text.split(",")]
    if len(counts) != len(GUARANTEES) or min(counts) < 1:
        raise SystemExit(f"--users: {len(GUARANTEES)} positive counts, one per team "
                         f"({', '.join(GUARANTEES)}), e.g. 6,8,10,14; got {text!r}")
    return dict(zip(GUARANTEES, counts, strict=True))


def all_normal(lists: dict[tuple[str, int], list[Recorded]]
               ) -> dict[tuple[str, int], list[Recorded]]:
    """The same jobs, every one of normal priority."""
    return {user: [replace(job, priority="normal") for job in jobs]
            for user, jobs in lists.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fair_share")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--days", type=float, default=7.0)
    parser.add_argument("--users", default="11,11,14,11",
                        help="users per team a,b,c,d")
    parser.add_argument("--workload", choices=("contention", "one-job"), default="contention",
                        help="contention: each user bound to one flavor, keeping "
                             "--jobs-per-user jobs submitted; one-job: each user keeps one job "
                             "of either flavor (the workload before, teams often asking less "
                             "than their guarantee of a flavor)")
    parser.add_argument("--jobs-per-user", type=int, default=None,
                        help="jobs each user keeps submitted (contention: 2, one-job: 1)")
    parser.add_argument("--starving-first", choices=("cohort", "team"), default="cohort",
                        help="where a job that has waited past State.reserve_after_s goes "
                             "first: across teams (the default) or in its own team only "
                             "(State.starving_orders_teams off)")
    # Each rule apart, to see what it costs the shares (bench/README.md: the decomposition).
    parser.add_argument("--held-now-weight", type=float, default=None,
                        help="State.held_now_weight (default: State's)")
    parser.add_argument("--without", choices=("priorities", "starvation-rule", "both"),
                        help="every job normal priority, or no job ever holding (no bound)")
    args = parser.parse_args(argv)
    users = parse_users(args.users)
    options: dict[str, object] = {"starving_orders_teams": args.starving_first == "cohort"}
    if args.held_now_weight is not None:
        options["held_now_weight"] = args.held_now_weight
    if args.without in ("starvation-rule", "both"):
        options["reserve_after_s"] = None
    per_user = args.jobs_per_user or (2 if args.workload == "contention" else 1)
    if per_user < 1:
        raise SystemExit(f"--jobs-per-user: at least 1; got {per_user}")
    lists = record(args.seed, users, args.days, args.workload, per_user)
    if args.without in ("priorities", "both"):
        lists = all_normal(lists)
    fair = simulate(lists, args.days, jobs_per_user=per_user, options=options)
    fifo = simulate(lists, args.days, first_come, jobs_per_user=per_user)
    f, ref = figures(fair), figures(fifo)
    print(f"workload {args.workload}, {per_user} job(s) kept per user, starving jobs first "
          f"in the {args.starving_first}; "
          f"teams: {', '.join(f'{t} {users[t]} users' for t in GUARANTEES)}; "
          f"{fair.started} starts, {fair.preempted} stopped at a checkpoint for another team, "
          f"{fair.refused} refused, decide() {fair.decide_s:.1f} s in all")
    # entitled: demand-aware (what the goal is measured against); by guarantee: the
    # guarantee over the guarantees' sum (the figure before); contended: the time the team's
    # jobs of the flavor asked for more than its guarantee; unasked: on average, how far
    # they fell short of it; held: accelerators it held on average.
    print(f"{'team':5} {'flavor':44} {'entitled':>8} {'share':>6} {'ratio':>6} "
          f"{'first come':>10} {'ratio':>6} {'by guarantee':>12} {'ratio':>6} "
          f"{'contended':>9} {'unasked':>7} {'held':>5}")
    for team in GUARANTEES:
        for flavor in PROJECT:
            due, mine = f.entitled[team][flavor], f.shares[team][flavor]
            theirs, static = ref.shares[team][flavor], static_entitlement(team, flavor)
            # The reference's own demand (another schedule, other queues) has its own
            # entitlement; its ratio is to that.
            ref_due = ref.entitled[team][flavor]
            print(f"{team:5} {flavor.label():44} {due:8.1%} {mine:6.1%} "
                  f"{mine / due if due else 0:6.3f} {theirs:10.1%} "
                  f"{theirs / ref_due if ref_due else 0:6.3f} {static:12.1%} "
                  f"{mine / static:6.3f} "
                  f"{fair.contended_s[team][flavor] / fair.span_s:9.0%} "
                  f"{fair.unasked_s[team][flavor] / fair.span_s:7.2f} "
                  f"{fair.held_s[team][flavor] / fair.span_s:5.1f}")
    print(f"max share deviation {f.deviation:.1%} of the demand-aware entitlement (goal "
          f"{SHARE_GOAL:.0%}: {f.deviation / SHARE_GOAL:.2f}x); first come, first served "
          f"{ref.deviation:.1%}; of the guarantee over the guarantees' sum: "
          f"{f.static_deviation:.1%} (first come {ref.static_deviation:.1%})")
    print(f"utilisation while waiting {f.utilisation:.1%} (goal {UTILISATION_GOAL:.0%}: "
          f"{f.utilisation / UTILISATION_GOAL:.3f}x); first come {ref.utilisation:.1%}")
    bound_h = (_reserve_after_s() + LONGEST_S + CHECKPOINT_EVERY_S) / HOUR
    bound = (f"bound {bound_h:.1f} h: {f.longest_wait_h / bound_h:.2f}x"
             if "reserve_after_s" not in options else "no bound: the starvation rule is off")
    print(f"longest wait {f.longest_wait_h:.1f} h ({bound}); "
          f"first come {ref.longest_wait_h:.1f} h; "
          f"over the project quota: {fair.over_quota} times")
    print(f"max share deviation {f.deviation * 100:.1f}%, utilisation while waiting "
          f"{f.utilisation * 100:.1f}%, longest wait {f.longest_wait_h:.1f} h")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
