"""How long a hung job goes unnoticed: 20 injected hangs through the control plane's own hang
rule (vertexplan.health), on simulated timelines; no processes, no database.

    python -m bench.hang_detection [--trials 20] [--seed 37] [--k 10] [--floor 300]

Each trial is a job whose steps come every `interval` seconds (drawn log-uniform from 0.5 s
to 60 s, each step jittered by +-20%), started 60 s before its first step; after 200 to 400
steps it hangs: no step is printed again. The control plane sees a step once the log follower
has read it (CP_FOLLOW_INTERVAL_S, 3 s, plus up to 2 s of Cloud Logging's own delay), and
judges the job in its reconcile sweep (CP_RECONCILE_INTERVAL_S, 5 s, at a random phase):
exactly what controlplane/logs/health.py calls on each sweep.

The delay is from the job's last step to the first sweep that flags it. Printed per trial and
as median and p95, each beside:
  watchdog   PyTorch's default NCCL watchdog: a collective that has not finished in 30 min
             fails the process (TORCH_NCCL_ASYNC_ERROR_HANDLING, the ProcessGroupNCCL
             timeout); until then the job shows RUNNING with busy GPUs
  floor      the team's floor (the default 300 s): no job is flagged sooner
  bound      the issue's promise, max(k x p95, floor) + one sweep and one follow interval
as ratios (delay / reference). Also counted: false alarms over the steady part of the runs
(the sweeps before each hang; goal 0).
The last line reads `median X s, p95 Y s: Z x sooner than the NCCL watchdog (1800 s), within
the bound in N of 20`.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from dataclasses import dataclass

from vertexplan import health

NCCL_WATCHDOG_S = 30 * 60.0
RECONCILE_S = 5.0
FOLLOW_S = 3.0
LOGGING_DELAY_S = 2.0
STARTUP_S = 60.0


@dataclass(frozen=True)
class Trial:
    interval_s: float
    steps: int
    delay_s: float        # from the last step to the sweep that flagged it
    bound_s: float        # max(k x p95, floor) + one sweep + one follow interval
    false_alarms: int     # sweeps that flagged it while it was still stepping


def run_trial(rng: random.Random, policy: health.HangPolicy) -> Trial:
    interval = math.exp(rng.uniform(math.log(0.5), math.log(60.0)))
    steps = rng.randint(200, 400)
    printed, t = [], STARTUP_S
    for _ in range(steps):
        t += interval * rng.uniform(0.8, 1.2)
        printed.append(t)
    hung_at = printed[-1]
    # When the control plane has each step: the follower's next read after Cloud Logging has
    # it (the reads every FOLLOW_S, at their own phase).
    follow_phase = rng.uniform(0, FOLLOW_S)
    seen_at = [math.ceil((p + rng.uniform(0, LOGGING_DELAY_S) - follow_phase) / FOLLOW_S)
               * FOLLOW_S + follow_phase for p in printed]
    sweep = rng.uniform(0, RECONCILE_S)
    false_alarms, first, j = 0, None, 0
    while first is None:
        while j < len(printed) and seen_at[j] <= sweep:
            j += 1
        known = printed[max(0, j - health.INTERVALS_KEPT - 1):j]
        verdict = health.hang_verdict(now=sweep, running_since=0.0, step_times=known,
                                      policy=policy)
        if verdict.hung:
            if sweep < hung_at:
                false_alarms += 1
            else:
                first = sweep
        sweep += RECONCILE_S
    p95 = health.expected_interval(printed[-health.INTERVALS_KEPT - 1:])
    bound = health.threshold_s(p95, policy) + RECONCILE_S + FOLLOW_S + LOGGING_DELAY_S
    return Trial(interval, steps, first - hung_at, bound, false_alarms)


def p95(values: list[float]) -> float:
    return health.percentile(values, 95)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hang_detection")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--k", type=float, default=10.0, help="the team's k (default 10)")
    parser.add_argument("--floor", type=float, default=300.0,
                        help="the team's floor in seconds (default 300)")
    args = parser.parse_args(argv)
    if args.trials < 1 or args.k <= 0 or args.floor <= 0:
        parser.error("--trials, --k and --floor must be positive")
    policy = health.HangPolicy(k=args.k, floor_s=args.floor)
    rng = random.Random(args.seed)
    trials = [run_trial(rng, policy) for _ in range(args.trials)]

    print(f"hang rule: max({args.k:g} x p95 step interval, {args.floor:g} s); sweeps every "
          f"{RECONCILE_S:g} s, log reads every {FOLLOW_S:g} s (+ up to {LOGGING_DELAY_S:g} s)")
    print(f"{'trial':>5} {'step s':>7} {'steps':>5} {'delay s':>8} {'bound s':>8} "
          f"{'/bound':>6} {'watchdog/delay':>14}")
    for n, trial in enumerate(trials, 1):
        print(f"{n:>5} {trial.interval_s:>7.2f} {trial.steps:>5} {trial.delay_s:>8.1f} "
              f"{trial.bound_s:>8.1f} {trial.delay_s / trial.bound_s:>6.2f} "
              f"{NCCL_WATCHDOG_S / trial.delay_s:>14.1f}")
    delays = [t.delay_s for t in trials]
    median, high = statistics.median(delays), p95(delays)
    within = sum(t.delay_s <= t.bound_s for t in trials)
    alarms = sum(t.false_alarms for t in trials)
    print()
    print(f"{'':>10} {'delay s':>8} {'/ watchdog 1800 s':>18} {'/ floor':>8}")
    for name, value in (("median", median), ("p95", high)):
        print(f"{name:>10} {value:>8.1f} {value / NCCL_WATCHDOG_S:>18.3f} "
              f"{value / args.floor:>8.2f}")
    print(f"false alarms while stepping: {alarms}")
    print(f"median {median:.0f} s, p95 {high:.0f} s: {NCCL_WATCHDOG_S / median:.1f} x sooner "
          f"than the NCCL watchdog ({NCCL_WATCHDOG_S:.0f} s), within the bound in {within} "
          f"of {len(trials)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
