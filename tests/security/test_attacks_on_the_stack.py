"""The hostile team's attacks replayed against the real stack (gunicorn with two workers,
Celery, Redis, PostgreSQL, the emulator running the jobs): each is refused or ignored, and the
victim team's jobs, checkpoints and models are as they were.

Vision (the victim: alice, admin; vic, viewer) runs a job that saves a checkpoint at step 50.
Speech (mallory, admin of her own team) runs a job that tries to write Cloud Logging entries
carrying the victim job's id through the emulator's Logging API (refused: only the emulator
writes a job's entries), and prints events naming the victim's checkpoint; then tries the side
doors through the API."""

from __future__ import annotations

import json
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import requests

from config.devstack import Stack
from localvertex.replicas import job_network
from tests.security.test_bounded_input import ALIAS_BOMB
from tests.stacks import Api

pytestmark = pytest.mark.integration

TERMINAL = {"SUCCEEDED", "FAILED", "CANCELLED"}
PROJECT = "local-project"

VICTIM = textwrap.dedent("""
    import json, os, time
    path = os.environ["AIP_CHECKPOINT_DIR"] + "step-00000050"
    os.makedirs(path, exist_ok=True)
    # A complete checkpoint, as the trainers write one: its COMMITTED marker last.
    open(os.path.join(path, "COMMITTED"), "w").write(json.dumps({"step": 50}))
    say = lambda **e: print(json.dumps(e), flush=True)
    say(event="run_started", rank=0, world_size=1, strategy="ddp")
    say(event="step", step=50, total_steps=100, loss=1.5)
    say(event="checkpoint_saved", step=50, path=path, bytes=10, seconds=0.1)
    # Runs until the test has seen the attacker's job end (it writes RELEASE), so everything the
    # attacker forged arrives while the victim runs; at most five minutes, whatever happens.
    release, started = os.environ["AIP_CHECKPOINT_DIR"] + "RELEASE", time.monotonic()
    while not os.path.exists(release) and time.monotonic() - started < 300:
        time.sleep(0.2)
    say(event="run_finished", step=100, final_loss=1.0, wall_s=int(time.monotonic() - started))
""")

# Writes entries with the victim's CustomJob id through the emulator's Logging API: well
# forged (the replica's own log name and task, as Vertex writes them: a checkpoint of its own,
# a resume from it, a step far ahead, a failure, the run finished) and carelessly (another log,
# a replica the victim does not have), each in a call of its own, and says what each answer
# was; then prints, as its own, checkpoint events naming the victim's checkpoint.
ATTACKER = textwrap.dedent("""
    import json, sys
    import grpc
    from google.api_core import exceptions
    from google.cloud.logging_v2.services.logging_service_v2 import LoggingServiceV2Client
    from google.cloud.logging_v2.services.logging_service_v2.transports import (
        LoggingServiceV2GrpcTransport)
    address, victim, project, mine, theirs = sys.argv[1:6]
    client = LoggingServiceV2Client(
        transport=LoggingServiceV2GrpcTransport(channel=grpc.insecure_channel(address)))
    def entry(log_id, task, payload, severity="INFO"):
        return {"log_name": f"projects/{project}/logs/{log_id}", "severity": severity,
                "resource": {"type": "ml_job", "labels": {"job_id": victim, "task_name": task}},
                "json_payload": payload}
    tries = {
        "checkpoint": entry("workerpool0-0", "workerpool0-0",
                            {"event": "checkpoint_saved", "step": 999, "path": mine}),
        "resumed": entry("workerpool0-0", "workerpool0-0",
                         {"event": "resumed", "step": 999, "path": mine}),
        "step": entry("workerpool0-0", "workerpool0-0",
                      {"event": "step", "step": 999, "total_steps": 100, "loss": 0.0}),
        "failure": entry("workerpool0-0", "workerpool0-0",
                         {"message": "Traceback (most recent call last): RuntimeError: "
                                     "CUDA error: out of memory 999"}, "ERROR"),
        "finished": entry("workerpool0-0", "workerpool0-0",
                          {"event": "run_finished", "step": 999, "final_loss": 0.0}),
        "careless": entry("workerpool0-7", "workerpool0-7",
                          {"event": "step", "step": 998, "loss": 0.0}),
    }
    answers = {}
    for name, forged in tries.items():
        try:
            # Not retried: from its job's network namespace the emulator never answers.
            client.write_log_entries(entries=[forged], retry=None, timeout=10)
            answers[name] = "written"
        except exceptions.GoogleAPICallError as exc:
            answers[name] = exc.grpc_status_code.name
    print("forgery answers: " + json.dumps(answers, sort_keys=True), flush=True)
    print(json.dumps({"event": "checkpoint_saved", "step": 7, "path": theirs}), flush=True)
    escape = mine + "/../../../../vision"
    print(json.dumps({"event": "checkpoint_saved", "step": 8, "path": escape}), flush=True)
""")


def python_job(name: str, code: str, *args: str) -> dict[str, Any]:
    return {"name": name, "chief": {"machine_type": "n1-standard-4"},
            "command": ["python", "-c", code, *args]}


def wait(predicate: Any, what: str, timeout_s: float = 120) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def mallory(stack: Stack) -> Api:
    made = json.loads(stack.manage("seed_demo", "--username", "mallory", "--password",
                                   "mallory-password", "--team", "speech", capture=True))
    return Api(stack.web_url, made["token"])


@pytest.fixture(scope="module")
def vic(stack: Stack, seeded: dict[str, Any]) -> Api:
    made = json.loads(stack.manage("seed_demo", "--username", "vic", "--team", seeded["team"],
                                   "--role", "viewer", capture=True))
    return Api(stack.web_url, made["token"])


def test_forged_entries_and_foreign_paths_change_nothing_in_the_victim_team(
        stack: Stack, api: Api, seeded: dict[str, Any], mallory: Api,
        vic: Api) -> None:
    team = seeded["team"]
    made = api.post("/api/v1/jobs/", python_job("victim", VICTIM))
    assert made.status_code == 201, made.text
    victim = made.json()["id"]
    running = api.wait_for(victim, lambda j: j["state"] == "RUNNING" and j["attempts"]
                           and j["attempts"][0]["vertex_name"], timeout_s=120,
                           what="the victim to run", stack=stack)
    victim_vertex_id = running["attempts"][0]["vertex_name"].rsplit("/", 1)[1]
    gcs = stack.emulator_data_dir.absolute() / "gcs" / "cp-local-bucket" / "jobs"
    theirs = f"{gcs}/{team}/job-{victim}/checkpoints/step-00000050"

    made = mallory.post("/api/v1/jobs/", python_job(
        "attacker", ATTACKER, f"127.0.0.1:{stack.config.emulator_port}", victim_vertex_id,
        PROJECT, f"{gcs}/speech/attacker-weights", theirs))
    assert made.status_code == 201, made.text
    attacker = made.json()["id"]
    done = mallory.wait_for(attacker, lambda j: j["state"] in TERMINAL, timeout_s=180,
                            what="the attacker's job to end", stack=stack)
    assert done["state"] == "SUCCEEDED", done.get("error_message")

    # Every forged write failed: the attacker's replica does not reach the emulator from its
    # job's network namespace (localvertex/replicas/job_network.py); where none can be made,
    # the emulator refuses a call without its token (localvertex/auth.py), which no replica
    # holds. Either way nothing reached the victim at all.
    # The follower stores an ended job's last lines as Cloud Logging delivers them, which can
    # be a moment after the job's state turned terminal.
    said = wait(lambda: [line["message"] for line in mallory.get(
        f"/api/v1/jobs/{attacker}/logs/", limit=1000)["results"]
        if "forgery answers: " in line["message"]], "the attacker's report in its logs", 60)
    answers = json.loads(said[0].split("forgery answers: ", 1)[1])
    refused = "UNAUTHENTICATED" if job_network.why_unavailable() else "UNAVAILABLE"
    assert answers == dict.fromkeys(
        ["careless", "checkpoint", "failure", "finished", "resumed", "step"], refused), answers
    assert api.get(f"/api/v1/jobs/{victim}/")["state"] == "RUNNING"
    (Path(theirs).parent / "RELEASE").write_text("")

    def victim_events() -> list[dict[str, Any]]:
        return api.get(f"/api/v1/jobs/{victim}/events/", limit=1000)["results"]

    api.wait_for(victim, lambda j: j["state"] in TERMINAL, timeout_s=180,
                 what="the victim to end", stack=stack)
    wait(lambda: any(e["kind"] == "run_finished" for e in victim_events()),
         "the victim's last event")
    ended = api.get(f"/api/v1/jobs/{victim}/")
    assert ended["state"] == "SUCCEEDED" and not ended["error_message"], ended
    events = victim_events()
    saved = [e for e in events if e["kind"] == "checkpoint_saved"]
    assert [(e["step"], e["data"]["path"]) for e in saved] == [(50, theirs)]
    assert not [e for e in events if e["kind"] in ("resumed", "suspicious_event")]
    assert [e["data"]["step"] for e in events if e["kind"] == "run_finished"] == [100]
    steps = api.get(f"/api/v1/jobs/{victim}/steps/", limit=1000)["results"]
    assert [s["step"] for s in steps] == [50]
    lines = api.get(f"/api/v1/jobs/{victim}/logs/", limit=1000)["results"]
    assert not [line for line in lines if "999" in line["message"]
                or "998" in line["message"] or line["replica"] not in ("workerpool0-0", "")]

    # Resubmitting from the newest checkpoint resumes from the victim's own.
    assert vic.post(f"/api/v1/jobs/{victim}/resubmit/", {}).status_code == 403
    again = api.post(f"/api/v1/jobs/{victim}/resubmit/", {})
    assert again.status_code == 201, again.text
    assert again.json()["request"]["env"]["CP_RESUME_FROM"] == theirs
    api.post(f"/api/v1/jobs/{again.json()['id']}/cancel/")

    # The attacker's own job kept neither path; its events name nothing to register or serve.
    theirs_events = mallory.get(f"/api/v1/jobs/{attacker}/events/", limit=1000)["results"]
    assert not [e for e in theirs_events if e["kind"] == "checkpoint_saved"]
    assert len([e for e in theirs_events if e["kind"] == "suspicious_event"]) == 2
    registered = mallory.post("/api/v1/serving/models/", {"job": attacker, "step": 7})
    assert registered.status_code == 400, registered.text
    assert mallory.session.get(f"{stack.web_url}/api/v1/jobs/{victim}/",
                               timeout=30).status_code == 404


@pytest.mark.parametrize("fields, field", [
    ({"base_output_directory": "gs://cp-local-bucket/jobs/vision/job-1"}, "base_output_directory"),
    ({"base_output_directory": "gs://cp-local-bucket/jobs/speech/../vision"},
     "base_output_directory"),
    ({"service_account": "vision-trainer@local-project.iam.gserviceaccount.com"},
     "service_account"),
    ({"network": "projects/1/global/networks/vision"}, "network"),
    ({"enable_web_access": True}, "enable_web_access"),
    ({"name": "x\nserviceAccount: mallory@evil.iam.gserviceaccount.com"}, "name"),
    ({"scheduling_strategy": "FLEX_START", "max_wait_hours": 1e308}, "max_wait_hours"),
])
def test_side_doors_are_field_errors(mallory: Api, fields: dict[str, Any], field: str) -> None:
    answer = mallory.post("/api/v1/jobs/", {**python_job("side-door", "print(1)"), **fields})
    assert answer.status_code == 400, answer.text
    assert field in answer.json(), answer.json()


def test_parsers_and_queries_are_bounded(stack: Stack, mallory: Api) -> None:
    bomb = mallory.session.post(f"{stack.web_url}/api/v1/jobs/import/", data=ALIAS_BOMB,
                                headers={"Content-Type": "application/yaml"}, timeout=30)
    assert bomb.status_code == 400 and len(bomb.content) < 2000
    deep = mallory.session.post(f"{stack.web_url}/api/v1/jobs/validate/",
                                data='{"a": ' + "[" * 400 + "]" * 400 + "}",
                                headers={"Content-Type": "application/json"}, timeout=30)
    assert deep.status_code == 400
    for query in ("created_after=2026-02-31", "created_after=9999-12-31T23:59:59-23:59"):
        got = mallory.session.get(f"{stack.web_url}/api/v1/jobs/?{query}", timeout=30)
        assert got.status_code == 400 and "created_after" in got.json()
    got = mallory.session.get(f"{stack.web_url}/api/v1/serving/models/?job={'9' * 40}",
                              timeout=30)
    assert got.status_code == 400


def test_lockout_holds_across_web_workers_and_the_admin_login(stack: Stack,
                                                               mallory: Api) -> None:
    def attempt(path: str, password: str) -> int:
        session = requests.Session()
        page = session.get(f"{stack.web_url}{path}", timeout=10)
        token = page.text.split('name="csrfmiddlewaretoken" value="', 1)[1].split('"', 1)[0]
        return session.post(f"{stack.web_url}{path}", timeout=10, allow_redirects=False,
                            headers={"Referer": f"{stack.web_url}{path}",
                                     "Connection": "close"},
                            data={"username": "mallory", "password": password,
                                  "csrfmiddlewaretoken": token}).status_code

    assert attempt("/login/", "wrong") == 200
    for _ in range(9):
        attempt("/login/", "wrong")
    # Every try with the right password lands on one of gunicorn's two workers: all refuse.
    assert [attempt("/login/", "mallory-password") for _ in range(6)] == [429] * 6
    assert attempt("/admin/login/", "mallory-password") == 429
    page = requests.get(f"{stack.web_url}/login/", timeout=10)
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
