"""Goodput from a job's timeline (vertexplan/goodput.py): the categories add up to the billed
time, replayed steps are counted at their measured time, queued time is reported but not
billed, and phase events refine what the other events can only estimate."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from fractions import Fraction

from vertexplan.goodput import (
    BILLED,
    NOT_BILLED,
    PRODUCTIVE,
    Attempt,
    Disruption,
    Marker,
    Phase,
    Step,
    Timeline,
    goodput,
    top_badput,
)

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
UNIT = 10.0  # seconds a step takes
GPUS = 8


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def steps(start: float, first: int, last: int, startup: float) -> list[Step]:
    """Step events of one run: step FIRST ends STARTUP + UNIT after START, then one a UNIT."""
    return [Step(1, at(start + startup + UNIT * (n - first + 1)), n)
            for n in range(first, last + 1)]


def twice_preempted(phases: list[Phase] | None = None) -> Timeline:
    """Started at 180 s (queued 60 s, provisioning 120 s). Run 1: 30 s start-up, steps 1-25,
    checkpoint at 20, preempted 5 s after step 25; back 100 s later from step 20: 20 s restore,
    steps 21-50 (21-25 again), checkpoint at 40, preempted 5 s after step 50; back from 40:
    steps 41-80 (41-50 again), 15 s to finish."""
    run1 = steps(180, 1, 25, 30)                      # step 25 at 460
    run2 = steps(565, 21, 50, 20)                      # resumed at 565, step 50 at 885
    run3 = steps(990, 41, 80, 20)                      # step 80 at 1410
    end = 1425
    return Timeline(
        attempts=[Attempt(1, at(0), at(60), at(180), at(end))],
        now=at(2000), accelerators=GPUS,
        disruptions=[Disruption(1, at(465), at(565), 20, step=25),
                     Disruption(1, at(890), at(990), 40, step=50)],
        steps=run1 + run2 + run3,
        markers=[Marker(1, run1[19].at, "checkpoint_saved", 20),
                 Marker(1, run2[19].at, "checkpoint_saved", 40),
                 Marker(1, at(565), "resumed", 20)],
        phases=phases or [])


def test_a_twice_preempted_job_adds_up_to_its_billed_time_and_replays_are_measured() -> None:
    split = goodput(twice_preempted())
    # Billed: the three runs, not the two 100 s gaps nor the queue.
    billed = (465 - 180) + (890 - 565) + (1425 - 990)
    assert split.billed_accelerator_seconds == billed * GPUS
    total = sum(c.accelerator_seconds for c in split.categories if c.billed)
    assert abs(total - split.billed_accelerator_seconds) <= 0.01 * billed * GPUS
    assert split.step_seconds == UNIT
    assert split.replayed_steps == 5 + 10
    assert split.seconds("replayed_steps") == split.replayed_steps * UNIT * GPUS
    # Each preemption lost the 5 s after its last step; each resume spent 20 s restoring.
    assert split.seconds("lost_progress") == 2 * 5 * GPUS
    assert split.seconds("restore") == 2 * 20 * GPUS
    assert split.seconds("program_startup") == 30 * GPUS
    assert split.seconds("program_shutdown") == 15 * GPUS
    assert split.seconds(PRODUCTIVE) == 80 * UNIT * GPUS
    assert split.seconds("other") == 0


def test_queued_and_provisioning_are_reported_but_not_billed() -> None:
    split = goodput(twice_preempted())
    by_name = {c.name: c for c in split.categories}
    assert by_name["queued"].accelerator_seconds == 60 * GPUS
    assert by_name["provisioning"].accelerator_seconds == 120 * GPUS
    assert by_name["preempted_unbilled"].accelerator_seconds == 2 * 100 * GPUS
    assert not any(by_name[name].billed for name in NOT_BILLED)
    assert [c.name for c in split.categories] == [*BILLED, *NOT_BILLED]


def test_phase_events_refine_the_split() -> None:
    # The trainer says 12 s of its 30 s start-up compiled, and the checkpoint at step 20 took
    # 4 s (the step after it took 14 s, not 10).
    plain = twice_preempted()
    shifted = [Step(s.attempt, s.at + timedelta(seconds=4), s.step) if 20 < s.step <= 25
               and s.at < at(465) else s for s in plain.steps]
    rough = goodput(Timeline(**{**plain.__dict__, "steps": shifted}))
    exact = goodput(Timeline(**{**plain.__dict__, "steps": shifted, "phases": [
        Phase(1, at(195), "compile", 12.0), Phase(1, at(412), "checkpoint_save", 4.0)]}))
    assert rough.seconds("compile") == 0 and rough.seconds("checkpoint_save") == 0
    assert rough.seconds("program_startup") == 30 * GPUS
    assert exact.seconds("compile") == 12 * GPUS
    assert exact.seconds("program_startup") == 18 * GPUS
    assert exact.seconds("checkpoint_save") == 4 * GPUS
    assert exact.seconds(PRODUCTIVE) == rough.seconds(PRODUCTIVE) - 4 * GPUS
    assert exact.billed_accelerator_seconds == rough.billed_accelerator_seconds


def test_without_phase_events_a_checkpoints_own_seconds_and_an_evals_excess_count() -> None:
    run = steps(0, 1, 10, 10)  # steps every 10 s from 20 s to 110 s
    slow = [Step(1, s.at + timedelta(seconds=7 if s.step > 5 else 0), s.step) for s in run]
    split = goodput(Timeline(
        attempts=[Attempt(1, at(0), None, at(0), at(120))], now=at(500), steps=slow,
        markers=[Marker(1, at(67), "eval", 5), Marker(1, at(27), "checkpoint_saved", 1, 3.0)]))
    assert split.seconds("eval") == 7
    assert split.seconds("checkpoint_save") == 3
    assert split.billed_accelerator_seconds == 120


def test_a_job_with_no_step_events_is_all_other_and_says_why() -> None:
    split = goodput(Timeline(attempts=[Attempt(1, at(0), at(30), at(90), at(690))],
                             now=at(1000), accelerators=2))
    assert split.billed_accelerator_seconds == 600 * 2
    assert split.seconds("other") == 600 * 2
    assert split.seconds("queued") == 30 * 2 and split.seconds("provisioning") == 60 * 2
    assert split.fraction == 0
    assert any("no step events" in note for note in split.notes)


def test_steps_after_the_last_checkpoint_of_a_failed_run_are_lost() -> None:
    split = goodput(Timeline(
        attempts=[Attempt(1, at(0), None, at(0), at(335), disrupted=True)], now=at(1000),
        steps=steps(0, 1, 30, 30),  # step 30 at 330
        markers=[Marker(1, at(240), "checkpoint_saved", 21)]))
    assert split.seconds("lost_progress") == 9 * UNIT + 5
    assert split.seconds(PRODUCTIVE) == 21 * UNIT


def test_a_suspected_hang_counts_the_silence_beyond_one_step() -> None:
    run = steps(0, 1, 5, 10)  # the last step at 60 s; still running at 400 s
    split = goodput(Timeline(attempts=[Attempt(1, at(0), None, at(0), None)], now=at(400),
                             steps=run, markers=[Marker(1, at(200), "suspected_hang")]))
    assert split.seconds("hang") == 400 - 60 - UNIT
    assert split.billed_accelerator_seconds == 400


def test_costs_share_the_bill_in_whole_micro_dollars() -> None:
    rate = Fraction(2_500_000, 3600)  # $2.50 an accelerator-hour
    split = goodput(twice_preempted(), rate)
    billed = [c.micros for c in split.categories if c.billed]
    assert sum(billed) == round(Fraction(split.billed_accelerator_seconds) * rate)
    assert all(c.micros == 0 for c in split.categories if not c.billed)
    assert goodput(twice_preempted()).categories[0].micros is None
    assert [c.name for c in top_badput(split.categories)] == [
        "replayed_steps", "restore", "program_startup"]


def test_a_hang_that_ended_its_attempt_is_hang_up_to_the_end_and_the_next_replays() -> None:
    # Attempt 1: steps 1-30 (checkpoint at 20), silent from 320 s until the hang is suspected
    # and the attempt ended at 900 s; attempt 2 resumes from 20 and runs steps 21-40.
    first = steps(0, 1, 30, 20)
    second = [Step(2, s.at, s.step) for s in steps(1000, 21, 40, 20)]
    split = goodput(Timeline(
        attempts=[Attempt(1, at(0), None, at(0), at(900), disrupted=True),
                  Attempt(2, at(900), None, at(1000), at(1220), resume_step=20)],
        now=at(2000), steps=first + second,
        disruptions=[Disruption(1, at(900), None, step=30)],
        markers=[Marker(1, first[19].at, "checkpoint_saved", 20),
                 Marker(1, at(900), "suspected_hang")]))
    assert split.seconds("hang") == 900 - 320 - UNIT
    assert split.seconds("lost_progress") == UNIT  # the step in flight when it went silent
    assert split.replayed_steps == 10
    assert split.seconds("replayed_steps") == 10 * UNIT
    assert split.seconds("restore") == 20
    assert split.seconds("queued") == 100
    assert split.billed_accelerator_seconds == 900 + 220


def test_a_phase_summed_over_several_step_events_takes_its_seconds_from_the_spans_before() -> None:
    # A trainer prints data_wait every 10 steps: 10 x 2 s of waiting ends in the span of one
    # step (10 s), so 10 s come from it and the other 10 from the spans before it.
    run = steps(0, 1, 20, 10)  # step events every 10 s, the first at 20 s
    plain = Timeline(attempts=[Attempt(1, at(0), None, at(0), at(230))], now=at(500), steps=run)
    waited = goodput(Timeline(**{**plain.__dict__, "phases": [
        Phase(1, run[9].at, "data_wait", 20.0), Phase(1, run[19].at, "data_wait", 20.0)]}))
    assert waited.seconds("data_wait") == 40
    assert waited.seconds(PRODUCTIVE) == goodput(plain).seconds(PRODUCTIVE) - 40
    assert waited.seconds("program_startup") == 10
    assert waited.billed_accelerator_seconds == 230
