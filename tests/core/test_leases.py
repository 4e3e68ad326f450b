"""Leases: one holder at a time, taken back when expired or released, and cheap to hold."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from controlplane.core.leases import held_lease
from controlplane.core.models import Lease

pytestmark = pytest.mark.django_db


def test_one_holder_at_a_time_and_free_again_after() -> None:
    with held_lease("tick", timedelta(seconds=60)) as first:
        assert first
        with held_lease("tick", timedelta(seconds=60)) as second:
            assert not second
        with held_lease("other", timedelta(seconds=60)) as other:
            assert other
    with held_lease("tick", timedelta(seconds=60)) as again:
        assert again
    assert Lease.objects.get(name="tick").holder == ""


def test_an_expired_lease_is_taken_over() -> None:
    with held_lease("tick", timedelta(seconds=60)) as first:
        assert first
        # Its holder died mid-task: the lease expires instead of being released.
        Lease.objects.filter(name="tick").update(expires_at=timezone.now() - timedelta(seconds=1))
        with held_lease("tick", timedelta(seconds=60)) as taken:
            assert taken


def test_holding_a_used_lease_costs_its_claim_and_its_release(
        django_assert_num_queries: Any) -> None:
    with held_lease("tick", timedelta(seconds=60)):
        pass
    with django_assert_num_queries(2), held_lease("tick", timedelta(seconds=60)) as held:
        assert held
    # Refused while held: the claim, and the check that the lease exists.
    with (held_lease("tick", timedelta(seconds=60)), django_assert_num_queries(2),
          held_lease("tick", timedelta(seconds=60)) as refused):
        assert not refused
