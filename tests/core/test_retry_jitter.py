"""The waits before a task's retries (controlplane.core.queue.retry_countdown): capped
exponential backoff with jitter that Celery itself would not add to a countdown given to
self.retry."""

from __future__ import annotations

import itertools
import random

from controlplane.core.queue import RETRY_CAP_S, retry_countdown


def test_each_wait_lies_in_the_upper_half_of_its_capped_backoff() -> None:
    rng = random.Random(7)
    for retries in range(12):
        backoff = min(2.0 ** retries, RETRY_CAP_S)
        waits = [retry_countdown(retries, rng) for _ in range(200)]
        assert all(backoff / 2 <= wait <= backoff for wait in waits), (retries, waits[:5])
    assert max(retry_countdown(30, rng) for _ in range(200)) <= RETRY_CAP_S


def test_tasks_that_failed_together_come_back_apart() -> None:
    """A backend outage fails many tasks at the same retry count: their waits spread over the
    whole upper half of the backoff instead of all being 2^n seconds."""
    rng = random.Random(11)
    waits = [retry_countdown(5, rng) for _ in range(500)]  # backoff 32 s: waits in [16, 32]
    assert len({round(wait, 3) for wait in waits}) > 450
    assert min(waits) < 17.0 and max(waits) > 31.0
    below_middle = sum(wait < 24.0 for wait in waits)
    assert 150 < below_middle < 350, "spread evenly, not bunched at one end"


def test_the_waits_grow_with_each_retry_until_the_cap() -> None:
    rng = random.Random(3)
    means = [sum(retry_countdown(n, rng) for _ in range(400)) / 400 for n in range(9)]
    assert all(later > earlier for earlier, later in itertools.pairwise(means[:7]))
    # 2^6 = 64 s is past the 60 s cap: the wait stops growing there.
    assert abs(means[7] - means[8]) < 3.0 and 40.0 < means[8] <= RETRY_CAP_S
