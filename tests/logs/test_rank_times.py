"""The callbacks' shared per-rank step times (callbacks/vcp_callbacks/ranks.py), in one process:
a gather carries each rank's mean since the previous gather, and a step event the printing
rank's mean since the previous event. Before the HF and Lightning callbacks used it, a rank that
never prints kept every step's time and sent the whole run's mean at each gather, so a rank
that slowed down late looked like its early self."""

from __future__ import annotations

import pytest

from vcp_callbacks.ranks import RankTimes

pytestmark = pytest.mark.trainers  # imports torch (the gather), as the training process does


def test_a_gather_carries_the_mean_since_the_last_gather_not_the_runs() -> None:
    times = RankTimes(every=2)
    times.stepped(1, 1.0, world_size=1)
    times.stepped(2, 1.0, world_size=1)
    times.stepped(3, 3.0, world_size=1)
    times.stepped(4, 5.0, world_size=1)
    assert times.taken() == {"step_time_s": 2.5, "rank_step_time_s": [4.0]}


def test_a_step_event_carries_its_own_steps_and_a_gather_once() -> None:
    times = RankTimes(every=3)
    for step, seconds in enumerate((2.0, 4.0, 6.0), start=1):
        times.stepped(step, seconds, world_size=1)
    assert times.taken() == {"step_time_s": 4.0, "rank_step_time_s": [4.0]}
    times.stepped(4, 1.0, world_size=1)
    assert times.taken() == {"step_time_s": 1.0}  # no gather since the last event
    assert times.taken() == {}


def test_every_must_be_one_or_more() -> None:
    with pytest.raises(ValueError, match="rank_times_every must be 1 or more"):
        RankTimes(every=0)
