"""A job Vertex refused to create for quota: visibly WAITING_FOR_QUOTA, with which quota, where
and the numbers, tried again with capped exponential backoff (never a hot loop), announced
once (the state change is the announcement), and cancellable like any job not yet on Vertex.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from controlplane.backends import errors
from controlplane.runs.models import Job, JobAttempt, JobState

_NUMBERS = ("limit", "usage", "requested")


def backoff_s(refusals: int, rng: random.Random | None = None) -> float:
    """The wait after the n-th refusal: doubling from CP_QUOTA_RETRY_S, capped, with jitter
    (80-100 %) so many waiting jobs do not all ask again at once."""
    rng = rng or random.Random()
    capped = min(settings.CP_QUOTA_RETRY_CAP_S,
                 settings.CP_QUOTA_RETRY_S * 2 ** max(refusals - 1, 0))
    return capped * rng.uniform(0.8, 1.0)


def _numbers(raw: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"metric": raw.get("quota_metric", ""), "region": raw.get("region", "")}
    for key in _NUMBERS:
        try:
            out[key] = int(raw[key])
        except (KeyError, ValueError):
            out[key] = None
    return out


def wait_for_quota(job: Job, attempt: JobAttempt, refusal: errors.QuotaExceeded) -> None:
    """Record a refusal on a locked job and put it in (or keep it in) WAITING_FOR_QUOTA."""
    now = timezone.now()
    waiting = job.state == JobState.WAITING_FOR_QUOTA
    previous = job.quota_wait if waiting else {}
    refusals = int(previous.get("refusals", 0)) + 1
    delay = backoff_s(refusals)
    numbers = _numbers(refusal.quota)
    numbers["region"] = numbers["region"] or attempt.region or job.region
    job.quota_wait = {
        **numbers, "message": str(refusal), "attempt": attempt.number,
        "since": previous.get("since") or now.isoformat(), "refusals": refusals,
        "last_refused_at": now.isoformat(),
        "next_try_at": (now + timedelta(seconds=delay)).isoformat(),
    }
    job.save(update_fields=["quota_wait"])
    attempt.not_before = now + timedelta(seconds=delay)
    attempt.submit_queued_at = now
    attempt.save(update_fields=["not_before", "submit_queued_at", "submitted_spec",
                                "price_snapshot"])
    if not waiting:
        job.update_state(JobState.WAITING_FOR_QUOTA, source="quota", error="")


def seconds_until_retry(job: Job) -> float:
    at = job.quota_wait.get("next_try_at")
    if not at:
        return settings.CP_QUOTA_RETRY_S
    return max((datetime.fromisoformat(at) - timezone.now()).total_seconds(), 0.0)


def end_wait(job: Job) -> None:
    """The create went through: the wait is over (kept as its record)."""
    if job.quota_wait and not job.quota_wait.get("ended_at"):
        job.quota_wait = {**job.quota_wait, "ended_at": timezone.now().isoformat(),
                          "next_try_at": None}
        job.save(update_fields=["quota_wait"])


def describe(wait: dict[str, Any]) -> str:
    """One line for the page, the API and Slack: which quota, where, and the numbers."""
    if not wait:
        return ""
    metric = wait.get("metric") or "an accelerator quota"
    parts = [f"{metric} in {wait.get('region') or 'its region'}"]
    numbers = [f"{k} {wait[k]}" for k in ("requested", "usage", "limit")
               if wait.get(k) is not None]
    if numbers:
        parts.append(": " + ", ".join(numbers).replace("usage", "in use"))
    return "".join(parts)
