"""How the follower plans its reads while a backlog is read: full pages, no call wasted."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from controlplane.backends.training import VertexBackend
from controlplane.logs import follower
from controlplane.logs.models import LogCursor
from controlplane.logs.options import FollowConfig
from controlplane.runs.models import Job, JobAttempt
from tests.logs.conftest import AttemptFactory
from vertexplan.logparse import filters

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
CONFIG = FollowConfig()


def at_head(cursors: list[LogCursor], moment: datetime, insert_id: str = "") -> None:
    for cursor in cursors:
        cursor.head_at, cursor.head_insert_id = moment, insert_id
        cursor.save()


def cursors_of(backend: VertexBackend, now: datetime) -> dict[int, LogCursor]:
    return {c.attempt_id: c for c in follower.open_cursors(backend.project, now, CONFIG)}


def test_attempts_catching_up_share_a_query_only_at_the_same_position(
        vertex: VertexBackend, make_attempt: AttemptFactory) -> None:
    attempts = [make_attempt(T0) for _ in range(5)]
    now = T0 + timedelta(minutes=10)
    cursors = cursors_of(vertex, now)
    # Two groups read before, a second apart: far behind the present, so their pages are
    # full and one query for both would re-read what the group ahead has stored.
    at_head([cursors[a.pk] for a in attempts[:3]], T0 + timedelta(seconds=5), "b-000000000040")
    at_head([cursors[a.pk] for a in attempts[3:]], T0 + timedelta(seconds=6), "a-000000000007")
    heads = follower.plan_heads(list(cursors_of(vertex, now).values()), CONFIG, now)
    assert sorted(len(s.members) for s in heads) == [2, 3]
    for stream in heads:
        assert len({(c.head_at, c.head_insert_id) for c in stream.members}) == 1
    # Near the present (the live case) the same second between them is read together.
    live = T0 + timedelta(minutes=10) - timedelta(seconds=8)
    cursors = cursors_of(vertex, now)
    at_head([cursors[a.pk] for a in attempts[:3]], live)
    at_head([cursors[a.pk] for a in attempts[3:]], live + timedelta(seconds=1))
    heads = follower.plan_heads(list(cursors_of(vertex, now).values()), CONFIG, now)
    assert [len(s.members) for s in heads] == [5]


def test_a_backlog_keeps_its_groups_whatever_the_insert_id_of_its_position(
        vertex: VertexBackend, make_attempt: AttemptFactory) -> None:
    for _ in range(3):
        make_attempt(T0)
    now = T0 + timedelta(minutes=10)
    cursors = list(cursors_of(vertex, now).values())
    plain = follower.plan_heads(cursors, CONFIG, now)
    at_head(cursors, T0 + timedelta(seconds=1), "x" * 40)
    with_id = follower.plan_heads(list(cursors_of(vertex, now).values()), CONFIG, now)
    assert [len(s.members) for s in plain] == [len(s.members) for s in with_id] == [3]


def test_while_a_backlog_is_read_caught_up_attempts_are_read_less_often(
        vertex: VertexBackend, make_attempt: AttemptFactory) -> None:
    behind, current = make_attempt(T0), make_attempt(T0)
    now = T0 + timedelta(minutes=10)
    cursors = cursors_of(vertex, now)
    read_at = now - timedelta(seconds=3)  # the previous sweep's fresh read began here
    at_head([cursors[current.pk]], read_at - CONFIG.head_overlap)
    # The first read of the other attempt is its backlog: the caught-up one waits for its turn.

    def planned(moment: datetime) -> list[set[int]]:
        heads = follower.plan_heads(list(cursors_of(vertex, moment).values()), CONFIG, moment)
        return [{c.attempt_id for c in s.members} for s in heads]

    assert planned(now) == [{behind.pk}]
    later = read_at + CONFIG.backlog_fresh_every
    assert planned(later) == [{current.pk}, {behind.pk}]
    # Once nothing is behind, every sweep reads the caught-up attempts again, as without a
    # backlog.
    at_head([cursors[behind.pk]], read_at - CONFIG.head_overlap)
    assert planned(now) == [{behind.pk, current.pk}]


def test_a_backlog_too_big_for_one_filter_is_cut_into_even_groups(
        vertex: VertexBackend, make_attempt: AttemptFactory) -> None:
    first = make_attempt(T0)
    job = Job.objects.get(pk=first.job_id)
    JobAttempt.objects.bulk_create(
        JobAttempt(job=job, number=n, display_name=f"a{n}", vertex_job_id=str(7 * 10**18 + n),
                   created_at=T0, submitted_at=T0) for n in range(2, 501))
    now = T0 + timedelta(minutes=10)
    cursors = list(cursors_of(vertex, now).values())
    heads = follower.plan_heads(cursors, CONFIG, now)
    # 500 ids need two filters: 250 each, not one full filter and the rest, whose group
    # would finish first and then be polled for nothing while the other still reads.
    assert sorted(len(s.members) for s in heads) == [250, 250]
    assert all(len(s.query) <= filters.MAX_FILTER_CHARS for s in heads)
    # Near the present (no backlog) the first filter is filled, as before.
    at_head(cursors, now - timedelta(seconds=5))
    heads = follower.plan_heads(list(cursors_of(vertex, now).values()), CONFIG, now)
    assert len(heads) == 2 and max(len(s.members) for s in heads) > 400
