"""How long a task may run, and what that asks of the broker's visibility timeout.

Every task acknowledges its message late (controlplane/core/queue.py), so on Redis the message
stays unacknowledged while the task runs; once it has been unacknowledged for the visibility
timeout (CP_BROKER_VISIBILITY_TIMEOUT_S), Redis hands it to another worker. A task still
running then runs twice at once. So every task has a hard time limit below the visibility
timeout, where the worker kills it and acknowledges its message (it is not delivered again:
the periodic sweeps redo what it left undone, as after any failure), and a soft limit before
that, where SoftTimeLimitExceeded is raised inside the task so it can stop cleanly.

A delayed message (a countdown) waits unacknowledged on the worker too, from when the worker
receives it until the task ends, so a countdown is shortened to fit in what the visibility
timeout leaves after the task's own limit. Every delayed task checks when it is due (a job's
`not_before`, a message's `next_try_at`) and the sweeps queue it again then, so a message that
arrives early only costs one look.

Imports nothing from Django's models: config/settings.py checks the limits with it at start.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured

# The soft limit, as a share of the hard one: a fifth of a task's time is left to stop cleanly.
SOFT_SHARE = 0.8
# Kept between a delayed task's countdown plus its hard limit and the visibility timeout: the
# worker's clock, the time the message spends reaching it, and the pool handing it on.
COUNTDOWN_MARGIN_S = 10.0


def soft_limit(hard_s: float) -> float:
    """The soft time limit that goes with HARD_S."""
    return round(hard_s * SOFT_SHARE, 3)


def check_visibility_timeout(visibility_s: float | None, hard_limits: dict[str, float]) -> None:
    """Refuse a visibility timeout that is not above every hard time limit in HARD_LIMITS
    (the setting's name -> seconds). None: the broker has no visibility timeout (the demo's
    SQL transport), so there is nothing to check."""
    if visibility_s is None:
        return
    name, longest = max(hard_limits.items(), key=lambda item: item[1])
    if visibility_s <= longest:
        raise ImproperlyConfigured(
            f"CP_BROKER_VISIBILITY_TIMEOUT_S={visibility_s:g} must be above the longest task "
            f"time limit, {name}={longest:g}: Redis would deliver a task still running after "
            f"{visibility_s:g} s to another worker, and it would run twice")


def broker_countdown(countdown: float | None, *, visibility_s: float | None,
                     hard_s: float) -> float | None:
    """COUNTDOWN, shortened so that it and the task's hard limit HARD_S end before the
    visibility timeout (see the module's docstring); None and broker without a visibility
    timeout leave it as it is."""
    if countdown is None or visibility_s is None:
        return countdown
    return max(0.0, min(countdown, visibility_s - hard_s - COUNTDOWN_MARGIN_S))
