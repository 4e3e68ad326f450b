"""Time-bounded leases in the database, claimed with a conditional UPDATE.

Works the same on SQLite (the demo) and PostgreSQL: a lease row is claimed only if it is free
or expired, and the UPDATE's row count says who won, so two workers never both hold it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from controlplane.core.models import Lease


def new_lease_holder() -> str:
    return f"{os.getpid()}-{uuid.uuid4().hex[:8]}"


@contextmanager
def held_lease(name: str, ttl: timedelta) -> Iterator[bool]:
    holder = new_lease_holder()
    now = timezone.now()
    try:
        with transaction.atomic():
            Lease.objects.get_or_create(name=name, defaults={"expires_at": now, "holder": ""})
    except IntegrityError:
        pass  # created concurrently by another worker: fine
    claimed = Lease.objects.filter(Q(expires_at__lte=now) | Q(holder=""), name=name).update(
        holder=holder, expires_at=now + ttl
    )
    try:
        yield claimed == 1
    finally:
        if claimed == 1:
            Lease.objects.filter(name=name, holder=holder).update(
                holder="", expires_at=timezone.now()
            )
