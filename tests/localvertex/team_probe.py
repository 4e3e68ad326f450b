"""Another team's job knocking on a port: a CustomJob labelled for TEAM (so it runs as that
team's user, in its own network namespace, as the control plane's jobs do) tries one TCP
connection to each port on 127.0.0.1 and says what each answered (issue 40's walls)."""

from __future__ import annotations

import textwrap

from google.cloud import aiplatform_v1

from tests.localvertex.helpers import (
    PARENT,
    EmulatorProcess,
    custom_job,
    entries,
    job_id,
    json_entries,
    python_pool,
    wait_state,
)

PROBE = textwrap.dedent("""
    import json, socket, sys
    for port in sys.argv[1:]:
        try:
            socket.create_connection(("127.0.0.1", int(port)), timeout=5).close()
            said = "OPEN"
        except OSError as exc:
            said = type(exc).__name__
        print(json.dumps({"port": int(port), "probe": said}), flush=True)
""")


def probe_as_team(emulator: EmulatorProcess, team: str, ports: list[int]) -> dict[int, str]:
    """Port -> what TEAM's job got trying it ("OPEN" or the error's class name)."""
    pool = python_pool(PROBE)
    pool["container_spec"]["args"] = [str(port) for port in ports]
    job = emulator.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        f"probe-{team}", [pool], labels={"cp-team": team}))
    done = wait_state(emulator.jobs, job.name, {aiplatform_v1.JobState.JOB_STATE_SUCCEEDED,
                                                aiplatform_v1.JobState.JOB_STATE_FAILED})
    assert done.state == aiplatform_v1.JobState.JOB_STATE_SUCCEEDED, done.error
    lines = json_entries(entries(emulator.logs, f'resource.labels.job_id="{job_id(job)}"'))
    return {int(line["port"]): line["probe"] for line in lines if "probe" in line}
