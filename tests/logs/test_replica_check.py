"""The page-wide replica check gives every entry the verdict trust.entry_problem gives it,
whatever order a page mixes jobs, replicas and forged log names in."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime

from controlplane.logs import trust
from vertexplan.logparse.entries import LogEntry

FACTS = {
    1: trust.JobFacts(output_prefix="gs://b/jobs/a/job-1", replica_counts=(1, 2), project="p"),
    2: trust.JobFacts(output_prefix="gs://b/jobs/b/job-2", replica_counts=(1,), project="q"),
}


def test_verdicts_match_entry_problem_entry_by_entry() -> None:
    at = datetime(2026, 11, 1, tzinfo=UTC)
    tasks = ["workerpool0-0", "workerpool1-1", "workerpool1-2", "workerpool2-0", "", "evil"]
    logs = ["", "projects/p/logs/workerpool0-0", "projects/q/logs/workerpool0-0",
            "projects/p/logs/workerpool1-1", "projects/p/logs/other"]
    check = trust.ReplicaCheck(FACTS)
    seen = 0
    # Twice over: the second pass answers from what the first one learnt.
    for _ in range(2):
        for job_id, task, log, event in itertools.product(FACTS, tasks, logs, (False, True)):
            entry = LogEntry("i", at, 200, "x", task, text_payload="t", log_name=log)
            assert (check.problem(job_id, entry, carries_event=event)
                    == trust.entry_problem(entry, FACTS[job_id], carries_event=event))
            seen += 1
    assert seen == 2 * 2 * len(tasks) * len(logs) * 2
