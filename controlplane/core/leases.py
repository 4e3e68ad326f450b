"""Time-bounded leases in the database, claimed with a conditional UPDATE.

Works the same on SQLite (the demo) and PostgreSQL: a lease row is claimed only if it is free
or expired, and the UPDATE's row count says who won, so two workers never both hold it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from controlplane.core.models import Lease


def new_lease_holder() -> str:
    return f"{os.getpid()}-{uuid.uuid4().hex[:8]}"


@contextmanager
def held_lease(name: str, ttl: timedelta) -> Iterator[bool]:
    """Yields whether this caller holds the lease `name` for up to `ttl`; released on exit.

    The claim comes first: a lease row exists after its first use, so a periodic task's lease
    costs its claim and its release (two statements), and the row is created only when a claim
    found none (beat runs each periodic task every few seconds, each under its lease)."""
    holder = new_lease_holder()
    now = timezone.now()
    claimed = _claim(name, holder, now, ttl)
    if not claimed and not Lease.objects.filter(name=name).exists():
        try:
            with transaction.atomic():
                Lease.objects.create(name=name, expires_at=now, holder="")
        except IntegrityError:
            pass  # created concurrently by another worker: fine
        claimed = _claim(name, holder, now, ttl)
    try:
        yield claimed
    finally:
        if claimed:
            Lease.objects.filter(name=name, holder=holder).update(
                holder="", expires_at=timezone.now()
            )


def _claim(name: str, holder: str, now: datetime, ttl: timedelta) -> bool:
    """Take the lease if it is free or expired: the UPDATE's row count says who won."""
    return Lease.objects.filter(Q(expires_at__lte=now) | Q(holder=""), name=name).update(
        holder=holder, expires_at=now + ttl
    ) == 1
