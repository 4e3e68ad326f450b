"""What a synthetic job does (the emulator's synthetic mode, synthetic_replicas.py): how many
steps its chief prints and how fast, and at which steps its VM is preempted or its chief fails.

A job may give its schedule in an environment variable of its container spec (the first worker
pool that sets it), as KEY=VALUE pairs separated by ";":

    LOCALVERTEX_SYNTHETIC="steps=120;step_s=0.5;checkpoint_every=10;preempt_at=40,90;fail_at=70;fails=2"

    steps             the run's length: the chief prints a `step` line for each, then
                      `run_finished`, and exits 0 (the job SUCCEEDED)               [1-1000000]
    step_s            seconds between its step lines: the job's log rate    [0.01-3600]
    checkpoint_every  a `checkpoint_saved` line every N steps, when the job has an output
                      directory (AIP_CHECKPOINT_DIR); a restarted chief resumes from the last
    preempt_at        steps before the last at which the job's spot VM is reclaimed, each
                      once: the emulator's own preemption (as admin PreemptJob), so the job
                      goes PENDING, is provisioned again and its replicas start again
    fail_at           the step at which the chief exits with status 1 ...
    fails             ... the first N times it gets there (default: every time, so the job
                      FAILS once Vertex's restarts are spent, at once with disable_retries)

A job that gives none gets one drawn from random.Random(f"{seed}:{job_id}") (the emulator's
--synthetic-seed): 20-200 steps at the emulator's --synthetic-step-s, a checkpoint every 10,
preempted once with probability PREEMPT_P and failing for good with probability FAIL_P; the
same seed and job id give the same schedule.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

ENV_NAME = "LOCALVERTEX_SYNTHETIC"
# The drawn schedules' share of jobs preempted once, and of jobs that fail for good.
PREEMPT_P = 0.1
FAIL_P = 0.05
DRAWN_STEPS = (20, 200)
DRAWN_CHECKPOINT_EVERY = 10
MAX_STEPS = 1_000_000
STEP_S_RANGE = (0.01, 3600.0)
# A bound, not a rule: more preemptions than this in one schedule is a typing slip.
MAX_PREEMPTIONS = 100

_KEYS = ("steps", "step_s", "checkpoint_every", "preempt_at", "fail_at", "fails")


class ScheduleError(ValueError):
    """A schedule that cannot be read; the message names the key, why, and what is valid."""


@dataclass(frozen=True)
class Schedule:
    steps: int
    step_s: float
    checkpoint_every: int = 0
    preempt_at: tuple[int, ...] = ()
    fail_at: int | None = None
    # None: every run that reaches fail_at fails there.
    fails: int | None = None

    def fails_at(self, step: int, failed_so_far: int) -> bool:
        """Whether the chief's run fails at `step`, having failed `failed_so_far` times."""
        if self.fail_at is None or step != self.fail_at:
            return False
        return self.fails is None or failed_so_far < self.fails


def given_text(job_spec) -> str | None:
    """The schedule text a CustomJobSpec (aiplatform.v1 protobuf) gives, or None."""
    for pool in job_spec.worker_pool_specs:
        for var in pool.container_spec.env:
            if var.name == ENV_NAME:
                return var.value
    return None


def for_job(job_spec, job_id: str, seed: int, step_s: float) -> Schedule:
    """The job's own schedule, or one drawn for it. ScheduleError when its own is wrong (the
    job service refuses such a job at create: check())."""
    text = given_text(job_spec)
    if text is not None:
        return parse(text, step_s)
    return draw(random.Random(f"{seed}:{job_id}"), step_s)


def check(job_spec) -> str | None:
    """Why the job's own schedule cannot be read (for INVALID_ARGUMENT), or None."""
    text = given_text(job_spec)
    if text is None:
        return None
    try:
        parse(text, 1.0)
    except ScheduleError as exc:
        return f"{ENV_NAME}: {exc}"
    return None


def draw(rng: random.Random, step_s: float) -> Schedule:
    steps = rng.randint(*DRAWN_STEPS)
    preempt_at: tuple[int, ...] = ()
    fail_at = None
    if rng.random() < PREEMPT_P:
        preempt_at = (rng.randint(1, steps - 1),)
    if rng.random() < FAIL_P:
        fail_at = rng.randint(1, steps)
    return Schedule(steps=steps, step_s=step_s, checkpoint_every=DRAWN_CHECKPOINT_EVERY,
                    preempt_at=preempt_at, fail_at=fail_at)


def parse(text: str, default_step_s: float) -> Schedule:
    values: dict[str, str] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep:
            raise ScheduleError(f"{part.strip()!r} is not KEY=VALUE; keys: {', '.join(_KEYS)}")
        if key not in _KEYS:
            raise ScheduleError(f"unknown key {key!r}; keys: {', '.join(_KEYS)}")
        if key in values:
            raise ScheduleError(f"{key} is given twice")
        values[key] = value.strip()
    if "steps" not in values:
        raise ScheduleError("steps is required (a whole number of 1 to 1000000)")
    steps = _whole(values, "steps", 1, MAX_STEPS)
    assert steps is not None
    step_s = _seconds(values["step_s"]) if "step_s" in values else default_step_s
    preempt_at = _steps_list(values.get("preempt_at", ""), steps)
    fail_at = _whole(values, "fail_at", 1, steps)
    fails = _whole(values, "fails", 1, MAX_STEPS)
    if fails is not None and fail_at is None:
        raise ScheduleError("fails needs fail_at: the step at which the chief fails")
    return Schedule(steps=steps, step_s=step_s,
                    checkpoint_every=_whole(values, "checkpoint_every", 1, MAX_STEPS) or 0,
                    preempt_at=preempt_at, fail_at=fail_at, fails=fails)


def _whole(values: dict[str, str], key: str, low: int, high: int) -> int | None:
    if key not in values:
        return None
    text = values[key]
    if not text.isdigit() or not low <= int(text) <= high:
        raise ScheduleError(f"{key}={text!r} must be a whole number of {low} to {high}")
    return int(text)


def _seconds(text: str) -> float:
    low, high = STEP_S_RANGE
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not low <= value <= high:  # also false for nan and inf
        raise ScheduleError(f"step_s={text!r} must be a number of seconds from {low:g} to "
                            f"{high:g}")
    return value


def _steps_list(text: str, steps: int) -> tuple[int, ...]:
    if not text:
        return ()
    parts = [p.strip() for p in text.split(",")]
    if len(parts) > MAX_PREEMPTIONS or not all(p.isdigit() and 1 <= int(p) < steps
                                               for p in parts):
        raise ScheduleError(f"preempt_at={text!r} must be up to {MAX_PREEMPTIONS} steps "
                            f"of 1 to {steps - 1} (before the run's last step), separated by "
                            "commas")
    return tuple(sorted(int(p) for p in parts))
