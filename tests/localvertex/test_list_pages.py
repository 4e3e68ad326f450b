"""A List's pages read from the store a chunk at a time (jobs/resources.py): the same pages as
filtering every record would give, across chunk boundaries, for sparse and dense matches."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.cloud import aiplatform_v1

from localvertex.jobs.resources import READ_CHUNK, Collection
from localvertex.jobs.store import JobRecord, JobState, JobStore

PARENT = "projects/p/locations/us-central1"
Request = aiplatform_v1.ListCustomJobsRequest.pb()


@pytest.fixture
def collection(tmp_path: Path) -> Collection[JobRecord]:
    store = JobStore(tmp_path / "jobs.sqlite3")
    jobs = Collection("CustomJob", "customJobs", store, operation_ids=store.new_id)
    for i in range(2 * READ_CHUNK + 50):
        record_id = store.new_id()
        job = aiplatform_v1.CustomJob.pb()(display_name=f"j{i}", labels={"n": str(i)})
        # Every 7th running, the rest ended: a sparse filter and a dense one.
        state = JobState.JOB_STATE_RUNNING if i % 7 == 0 else JobState.JOB_STATE_SUCCEEDED
        jobs.stamp_new(job, PARENT, record_id, state)
        store.insert(JobRecord(id=record_id, project="p", location="us-central1", job=job))
    # Another parent's records are never listed.
    job = aiplatform_v1.CustomJob.pb()(display_name="elsewhere")
    jobs.stamp_new(job, "projects/p/locations/europe-west4", store.new_id(),
                   JobState.JOB_STATE_RUNNING)
    store.insert(JobRecord(id=job.name.rsplit("/", 1)[1], project="p", location="europe-west4",
                           job=job))
    return jobs


MATCHES = {
    'state="JOB_STATE_RUNNING"': lambda r: r.state == JobState.JOB_STATE_RUNNING,
    "labels.n:*": lambda r: "n" in r.job.labels,
    "": lambda r: True,
}


@pytest.mark.parametrize("filter_", list(MATCHES))
@pytest.mark.parametrize("size", [3, 100, READ_CHUNK, 300])
def test_pages_hold_every_match_once_newest_first(collection: Collection[JobRecord],
                                                  filter_: str, size: int) -> None:
    every = [r.job.display_name for r in collection.store.list("p", "us-central1")
             if MATCHES[filter_](r)]
    assert len(every) in (65, 2 * READ_CHUNK + 50)
    listed: list[str] = []
    token = ""
    while True:
        records, token = collection.page(Request(parent=PARENT, filter=filter_,
                                                 page_size=size, page_token=token))
        assert len(records) == size or not token
        listed += [r.job.display_name for r in records]
        if not token:
            break
    assert listed == every
