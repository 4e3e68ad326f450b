"""Cloud Logging through Google's LoggingServiceV2Client: the follower's query shapes, paging,
writing and tailing; and no job's entries written by anyone but the emulator itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading

import pytest
from google.api_core import exceptions
from google.cloud import aiplatform_v1
from google.cloud.logging_v2.types import LogEntry, TailLogEntriesRequest

from localvertex.core.timeutil import format_rfc3339, from_timestamp
from tests.localvertex.helpers import (
    PARENT,
    PROJECT,
    EmulatorProcess,
    custom_job,
    entries,
    job_id,
    json_entries,
    python_pool,
    wait_state,
)

State = aiplatform_v1.JobState
COUNT_LINES = (
    "import sys\n"
    "for i in range(25):\n"
    "    print(f'line {i}')\n"
    "    if i % 5 == 0: print(f'problem {i}', file=sys.stderr)\n"
)


@pytest.fixture(scope="module")
def two_jobs(emulator: EmulatorProcess) -> list[str]:
    jobs = [
        emulator.jobs.create_custom_job(
            parent=PARENT, custom_job=custom_job(f"lines-{n}", [python_pool(COUNT_LINES)])
        )
        for n in range(2)
    ]
    for job in jobs:
        wait_state(emulator.jobs, job.name, State.JOB_STATE_SUCCEEDED)
    return [job_id(job) for job in jobs]


def ids_filter(ids: list[str]) -> str:
    # The follower's shape: one query for every running job, hundreds of ids.
    decoys = [str(10**15 + n) for n in range(300)]
    group = " OR ".join(f'resource.labels.job_id="{i}"' for i in [*decoys, *ids])
    return f'resource.type="ml_job" AND ({group})'


def replica_lines(items) -> list:
    return [e for e in items if e.resource.labels.get("task_name")]


def test_or_of_job_ids_pages_without_duplicates(emulator, two_jobs) -> None:
    everything = entries(emulator.logs, ids_filter(two_jobs), page_size=1000)
    assert len(replica_lines(everything)) == 2 * 30
    assert {e.resource.labels["job_id"] for e in everything} == set(two_jobs)

    pages = list(
        emulator.logs.list_log_entries(
            request={
                "resource_names": [f"projects/{PROJECT}"],
                "filter": ids_filter(two_jobs),
                "page_size": 7,
            }
        ).pages
    )
    assert all(len(p.entries) <= 7 for p in pages) and len(pages) > 8
    paged = [e for p in pages for e in p.entries]
    assert [e.insert_id for e in paged] == [e.insert_id for e in everything]
    keys = [(e.timestamp, e.insert_id) for e in paged]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)

    newest_first = entries(
        emulator.logs, ids_filter(two_jobs), order_by="timestamp desc", page_size=9
    )
    assert [e.insert_id for e in newest_first] == [e.insert_id for e in reversed(everything)]


def test_severity_task_timestamp_and_insert_id_filters(emulator, two_jobs) -> None:
    first = two_jobs[0]
    job_filter = f'resource.labels.job_id="{first}"'
    errors = entries(emulator.logs, f"{job_filter} AND severity>=ERROR")
    assert sorted(e.text_payload for e in errors) == sorted(f"problem {i}" for i in range(0, 25, 5))
    assert entries(emulator.logs, f'{job_filter}\nresource.labels.task_name="workerpool1-0"') == []

    lines = replica_lines(entries(emulator.logs, job_filter))
    pivot = lines[9]
    stamp = format_rfc3339(from_timestamp(LogEntry.pb(pivot).timestamp))
    after = replica_lines(entries(emulator.logs, f'{job_filter} AND timestamp>"{stamp}"'))
    assert [e.insert_id for e in after] == [e.insert_id for e in lines[10:]]
    from_pivot = replica_lines(entries(emulator.logs, f'{job_filter} AND timestamp>="{stamp}"'))
    assert [e.insert_id for e in from_pivot] == [e.insert_id for e in lines[9:]]
    by_insert = replica_lines(
        entries(emulator.logs, f'{job_filter} AND insertId>"{pivot.insert_id}"')
    )
    assert [e.insert_id for e in by_insert] == [e.insert_id for e in lines[10:]]


def test_bad_requests_are_invalid_arguments(emulator) -> None:
    with pytest.raises(exceptions.InvalidArgument, match="protoPayload"):
        entries(emulator.logs, 'protoPayload.method="x"')
    with pytest.raises(exceptions.InvalidArgument, match="20000"):
        entries(emulator.logs, 'resource.type="ml_job"' + " " * 20_000)
    with pytest.raises(exceptions.InvalidArgument, match="order_by"):
        entries(emulator.logs, "", order_by="severity desc")
    with pytest.raises(exceptions.InvalidArgument, match="page_token"):
        entries(emulator.logs, "", page_token="bogus")


def test_write_then_list_and_tail(start_emulator) -> None:
    # Standing in for Vertex's log agent, the one writer of jobs' (ml_job) entries.
    emulator = start_emulator("--accept-job-log-writes", "--logging-quota-per-minute", "0")
    log_name = f"projects/{PROJECT}/logs/written"
    resource = {"type": "ml_job", "labels": {"job_id": "777", "task_name": "workerpool0-0"}}
    received: list = []
    got_two = threading.Event()

    def requests():
        yield TailLogEntriesRequest(
            resource_names=[f"projects/{PROJECT}"],
            filter='resource.labels.job_id="777"',
            buffer_window={"nanos": 200_000_000},
        )
        got_two.wait(15)  # keep the request stream open while tailing

    stream = emulator.logs.tail_log_entries(requests=requests(), timeout=20)

    def follow() -> None:
        for response in stream:  # the first response, confirming the session, is empty
            received.extend(response.entries)
            if len(received) >= 2:
                got_two.set()
                return

    follower = threading.Thread(target=follow)
    follower.start()
    try:
        # Written after the tail opens (its first poll is after one buffer window).
        threading.Event().wait(0.5)
        emulator.logs.write_log_entries(
            log_name=log_name,
            resource=resource,
            entries=[
                {"text_payload": "written one", "severity": "WARNING"},
                {"json_payload": {"event": "step", "step": 1}},
            ],
        )
        assert got_two.wait(15)
    finally:
        got_two.set()
        stream.cancel()
        follower.join(10)
    assert [e.text_payload for e in received] == ["written one", ""]
    listed = entries(emulator.logs, 'resource.labels.job_id="777" AND severity=WARNING')
    assert [e.text_payload for e in listed] == ["written one"]
    assert listed[0].log_name == log_name and listed[0].insert_id


# A replica that writes, through the Logging API, entries as Vertex writes the victim job's own
# (its CustomJob id, its replica's log name and task): a step far ahead, a checkpoint of the
# attacker's, the run finished. Then a request mixing an entry of its own with one forged.
FORGER = textwrap.dedent("""
    import json, os, sys
    from google.api_core import exceptions
    from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
    from google.cloud.logging_v2.services.logging_service_v2.transports import (
        LoggingServiceV2GrpcTransport)
    from localvertex import auth
    address, project, victim = sys.argv[1:4]
    channel = auth.channel(address, os.environ["FORGER_TOKEN"])
    client = LoggingServiceV2Client(transport=LoggingServiceV2GrpcTransport(channel=channel))
    forged = {"log_name": f"projects/{project}/logs/workerpool0-0",
              "resource": {"type": "ml_job",
                           "labels": {"job_id": victim, "task_name": "workerpool0-0"}}}
    own = {"log_name": f"projects/{project}/logs/forger-own", "resource": {"type": "global"},
           "text_payload": "forger's own line"}
    answers = []
    for batch in (
        [{**forged, "json_payload": {"event": "step", "step": 999, "loss": 0.0}},
         {**forged, "json_payload": {"event": "checkpoint_saved", "step": 999,
                                      "path": "/tmp/attacker"}},
         {**forged, "json_payload": {"event": "run_finished", "step": 999}}],
        [own, {**forged, "text_payload": "Traceback (most recent call last):"}],
    ):
        try:
            client.write_log_entries(entries=batch)
            answers.append("written")
        except exceptions.GoogleAPICallError as exc:
            answers.append(f"{exc.grpc_status_code.name}: {exc.message}")
    print(json.dumps({"answers": answers}), flush=True)
""")


def test_no_process_but_the_emulator_writes_a_jobs_entries(emulator: EmulatorProcess) -> None:
    victim = emulator.jobs.create_custom_job(
        parent=PARENT, custom_job=custom_job("victim", [python_pool(
            "import json\nprint(json.dumps({'event': 'step', 'step': 1, 'loss': 2.0}))")]))
    victim = wait_state(emulator.jobs, victim.name, State.JOB_STATE_SUCCEEDED)
    victim_filter = f'resource.labels.job_id="{job_id(victim)}"'
    before = [(e.insert_id, e.log_name) for e in entries(emulator.logs, victim_filter)]
    assert before

    # Run beside the emulator, as a process on its machine, even with the emulator's token: a
    # replica's own code reaches neither the API (its job's network namespace, tests/security/
    # test_replica_walls.py) nor the token (localvertex/auth.py); the Logging API refuses
    # the writes all the same.
    done = subprocess.run([sys.executable, "-c", FORGER, emulator.address, PROJECT,
                           job_id(victim)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "FORGER_TOKEN": emulator.token})
    said = [json.loads(line) for line in done.stdout.splitlines() if '"answers"' in line]
    assert said, done.stderr[-2000:]
    for answer in said[0]["answers"]:
        assert answer.startswith("PERMISSION_DENIED:"), answer
        assert "written by Vertex AI from the job's replicas' output only" in answer
    # The victim's log is as its own replica left it, and nothing of the refused requests
    # was written (not even the forger's own line sent beside a forged one).
    after = [(e.insert_id, e.log_name) for e in entries(emulator.logs, victim_filter)]
    assert after == before
    assert json.dumps(json_entries(entries(emulator.logs, victim_filter))).count("999") == 0
    assert entries(emulator.logs, f'logName="projects/{PROJECT}/logs/forger-own"') == []
