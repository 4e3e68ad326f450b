"""A cluster's spend counts in its team's month for as long as it existed in that month."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from controlplane.clusters import lifecycle
from controlplane.clusters.models import Cluster
from controlplane.clusters.spend import month_micros
from controlplane.costs import spend

pytestmark = pytest.mark.django_db


def cluster(team, user, name="c") -> Cluster:
    return lifecycle.create_cluster(team=team, user=user, request={
        "name": name, "pools": [{"id": "a", "machine_type": "n1-standard-4"}]})


def test_a_cluster_bills_each_month_it_existed_in(member, outsider, queued):
    team = member.memberships.get().team
    c = cluster(team, member)
    assert c.hourly_micros > 0
    # Created 3 hours before the month ended, deleted 2 hours into the next.
    created = datetime(2026, 10, 31, 21, tzinfo=UTC)
    Cluster.objects.filter(pk=c.pk).update(created_at=created, state="DELETED",
                                           deleted_at=created + timedelta(hours=5))
    assert month_micros(team, date(2026, 10, 1)) == 3 * c.hourly_micros
    assert month_micros(team, date(2026, 11, 1)) == 2 * c.hourly_micros
    assert month_micros(team, date(2026, 12, 1)) == 0
    # Another team pays nothing for it.
    assert month_micros(outsider.memberships.get().team, date(2026, 10, 1)) == 0


def test_the_teams_month_includes_its_clusters(member, queued):
    team = member.memberships.get().team
    c = cluster(team, member)
    Cluster.objects.filter(pk=c.pk).update(created_at=datetime.now(UTC) - timedelta(hours=1))
    spent = spend.month_spent(team)
    # An hour of it (or what of the hour falls in this month, just after the 1st's midnight).
    assert 0 < spent <= c.hourly_micros + 1000
    assert spend.month_committed(team) >= spent
