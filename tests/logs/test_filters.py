from __future__ import annotations

from datetime import UTC, datetime

from controlplane.logs.follower import MAX_FILTER_CHARS, job_filters

SINCE = datetime(2026, 11, 1, 12, 0, 0, 123456, tzinfo=UTC)


def test_one_filter_covers_many_jobs() -> None:
    filters = job_filters([str(10**18 + i) for i in range(100)], SINCE)
    assert len(filters) == 1
    assert filters[0].startswith('resource.type="ml_job" AND '
                                 'timestamp>="2026-11-01T12:00:00.123456Z" AND (')
    assert filters[0].count("resource.labels.job_id=") == 100


def test_filters_split_at_the_length_limit_without_losing_a_job() -> None:
    ids = [str(10**18 + i) for i in range(2000)]
    filters = job_filters(ids, SINCE)
    assert len(filters) > 1
    assert all(len(f) <= MAX_FILTER_CHARS for f in filters)
    seen = [i for f in filters for i in ids if f'job_id="{i}"' in f]
    assert sorted(seen) == sorted(ids)
    # As few queries as the limit allows.
    per_term = len(f'resource.labels.job_id="{ids[0]}" OR ')
    assert len(filters) <= -(-len(ids) * per_term // (MAX_FILTER_CHARS - 100))
