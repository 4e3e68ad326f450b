"""Walls between teams inside the machine (issue 40, doors 1, 2, 4 and 5 as a job's own code
sees them): a team's replicas run as its team's user, in a network namespace of their job's.

Team vision runs a two-replica job that holds a secret in its environment and a listener on
its MASTER_PORT, which its second replica reaches on 127.0.0.1 as torch.distributed would.
While it runs, team speech's job tries every door against it (read its environment, write
into and list its output folder, kill it, connect to the emulator's gRPC port and its admin
service's, call them without the emulator's token, read that token's file, connect to Redis
and PING it, to a listener of the host, to vision's listener) and prints what each answered;
every one fails, and vision's job still ends SUCCEEDED. Without a job's network namespace the
emulator's calls would meet UNAUTHENTICATED instead (test_emulator_credentials.py)."""

from __future__ import annotations

import os
import pwd
import re
import socket
import subprocess
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from google.cloud import aiplatform_v1

import localvertex.replicas.sandbox as sandbox
from localvertex import auth
from localvertex.replicas import job_network, output_folders, team_users
from tests.conftest import require
from tests.localvertex.helpers import (
    FAST_FLAGS,
    PARENT,
    EmulatorProcess,
    custom_job,
    entries,
    job_id,
    json_entries,
    python_pool,
    wait_for,
    wait_state,
)

pytestmark = pytest.mark.slow

State = aiplatform_v1.JobState
SECRET = "vision-wandb-key-0123456789"
REDIS_PORT = 6379


@pytest.fixture(autouse=True)
def _root() -> None:
    """Users of their own and network namespaces need root (CI runs these as root)."""
    require(os.geteuid() == 0, "team users and network namespaces need root")


# Vision's chief: listens on MASTER_PORT, meets its worker there, says who it is, then runs
# until the test writes RELEASE into its checkpoint folder (at most two minutes).
VISION_CHIEF = textwrap.dedent("""
    import json, os, socket, time
    port = int(os.environ["MASTER_PORT"])
    server = socket.create_server(("127.0.0.1", port))
    say = lambda **e: print(json.dumps(e), flush=True)
    say(listening=port, pid=os.getpid(), uid=os.getuid(), secret=bool(os.environ.get("SECRET")))
    peer, _ = server.accept()
    say(met=peer.recv(16).decode())
    release, started = os.environ["AIP_CHECKPOINT_DIR"] + "RELEASE", time.monotonic()
    while not os.path.exists(release) and time.monotonic() - started < 120:
        time.sleep(0.1)
    raise SystemExit(0 if os.path.exists(release) else 3)
""")
VISION_WORKER = textwrap.dedent("""
    import json, os, socket, time
    started = time.monotonic()
    while True:
        try:
            peer = socket.create_connection((os.environ["MASTER_ADDR"],
                                             int(os.environ["MASTER_PORT"])), timeout=5)
            break
        except OSError:
            if time.monotonic() - started > 60:
                raise
            time.sleep(0.1)
    peer.sendall(b"worker")
    print(json.dumps({"worker_uid": os.getuid()}), flush=True)
""")
# Speech's job: each door, one line each.
SPEECH = textwrap.dedent("""
    import json, os, signal, socket, sys
    import grpc
    pid, folder, token_file = int(sys.argv[1]), sys.argv[2], sys.argv[8]
    ports = {"emulator_grpc": int(sys.argv[3]), "redis": int(sys.argv[4]),
             "host_listener": int(sys.argv[5]), "vision_listener": int(sys.argv[6]),
             "emulator_admin": int(sys.argv[7])}
    def attempt(door, action):
        try:
            action()
            result = "OPEN"
        except OSError as exc:
            result = type(exc).__name__ + ": " + str(exc.strerror)
        except grpc.RpcError as exc:
            result = exc.code().name + ": " + str(exc.details())
        print(json.dumps({"door": door, "result": result}), flush=True)
    def call(port, method, body):
        with grpc.insecure_channel("127.0.0.1:%d" % port) as channel:
            channel.unary_unary(method)(body, timeout=5)
    def ping_redis():
        with socket.create_connection(("127.0.0.1", ports["redis"]), timeout=5) as peer:
            peer.sendall(b"PING\\r\\n")
            if not peer.recv(64).startswith(b"+PONG"):
                raise PermissionError(13, "Redis refused PING")
    def write():
        with open(os.path.join(folder, "checkpoints", "planted"), "w") as f:
            f.write("speech was here")
    attempt("environ", lambda: open("/proc/%d/environ" % pid, "rb").read())
    attempt("write", write)
    attempt("list", lambda: os.listdir(folder))
    attempt("kill", lambda: os.kill(pid, signal.SIGKILL))
    for door, port in ports.items():
        attempt(door, lambda port=port: socket.create_connection(("127.0.0.1", port),
                                                                  timeout=5).close())
    attempt("list_jobs_without_token", lambda: call(
        ports["emulator_grpc"], "/google.cloud.aiplatform.v1.JobService/ListCustomJobs", b""))
    attempt("admin_without_token", lambda: call(
        ports["emulator_admin"], "/localvertex.v1.Admin/SetFaults", b'{"rate": 1.0}'))
    attempt("token_file", lambda: open(token_file).read())
    attempt("redis_ping", ping_redis)
    print(json.dumps({"uid": os.getuid()}), flush=True)
""")
CLOSED = {
    "environ": "PermissionError", "write": "PermissionError", "list": "PermissionError",
    "kill": "PermissionError", "emulator_grpc": "ConnectionRefusedError",
    "redis": "ConnectionRefusedError", "host_listener": "ConnectionRefusedError",
    "vision_listener": "ConnectionRefusedError", "emulator_admin": "ConnectionRefusedError",
    # From its job's network namespace the emulator is not there to ask; and the token that
    # would open it is in a file the team's user cannot read.
    "list_jobs_without_token": "UNAVAILABLE", "admin_without_token": "UNAVAILABLE",
    "token_file": "PermissionError", "redis_ping": "ConnectionRefusedError",
}


@pytest.fixture
def emulator(tmp_path: Path) -> Iterator[EmulatorProcess]:
    running = EmulatorProcess(tmp_path / "lv", FAST_FLAGS)
    running.start()
    yield running
    running.stop()


def _payloads(emulator: EmulatorProcess, job: aiplatform_v1.CustomJob) -> list[dict]:
    """The job's JSON lines, numbers as ints (a jsonPayload's numbers come back as floats)."""
    said = json_entries(entries(emulator.logs, f'resource.labels.job_id="{job_id(job)}"'))
    return [{k: int(v) if isinstance(v, float) else v for k, v in p.items()} for p in said]


def _first(payloads: list[dict], key: str) -> dict | None:
    return next((p for p in payloads if key in p), None)


def test_another_teams_job_reaches_nothing_of_a_running_job(emulator: EmulatorProcess) -> None:
    gcs = emulator.data_dir.absolute() / "gcs" / "walls" / "jobs"
    chief = python_pool(VISION_CHIEF, env={"SECRET": SECRET})
    vision = emulator.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        "vision", [chief, python_pool(VISION_WORKER)], labels={"cp-team": "vision"},
        base_output_directory={"output_uri_prefix": "gs://walls/jobs/vision/job-1/"}))

    def met() -> list[dict] | None:
        payloads = _payloads(emulator, vision)
        return payloads if _first(payloads, "met") and _first(payloads, "worker_uid") else None

    said = wait_for(met, timeout=90, interval=0.2)
    ready = _first(said, "listening")
    assert ready and ready["secret"] and _first(said, "met")["met"] == "worker"
    vision_user = pwd.getpwuid(ready["uid"]).pw_name
    assert vision_user == team_users.user_name("vision")
    assert _first(said, "worker_uid")["worker_uid"] == ready["uid"]  # one team, one user
    folder = gcs / "vision" / "job-1"
    info = folder.stat()
    assert (info.st_uid, info.st_mode & 0o7777) == (ready["uid"], output_folders.OUTPUT_MODE)

    with socket.create_server(("127.0.0.1", 0)) as host_listener:
        args = [str(ready["pid"]), str(folder), str(emulator.port), str(REDIS_PORT),
                str(host_listener.getsockname()[1]), str(ready["listening"]),
                str(emulator.admin_port), str(emulator.data_dir.absolute() / auth.TOKEN_FILE)]
        attacker = python_pool(SPEECH)
        attacker["container_spec"]["args"] = args
        speech = emulator.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
            "speech", [attacker], labels={"cp-team": "speech"},
            base_output_directory={"output_uri_prefix": "gs://walls/jobs/speech/job-2/"}))
        speech = wait_state(emulator.jobs, speech.name,
                            {State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED}, timeout=90)
    assert speech.state == State.JOB_STATE_SUCCEEDED, speech.error
    lines = _payloads(emulator, speech)
    doors = {p["door"]: p["result"] for p in lines if "door" in p}
    assert {door: result.split(":")[0] for door, result in doors.items()} == CLOSED, doors
    speech_uid = _first(lines, "uid")["uid"]
    assert speech_uid not in (0, ready["uid"])
    assert pwd.getpwuid(speech_uid).pw_name == team_users.user_name("speech")

    (folder / "checkpoints" / "RELEASE").write_text("")
    vision = wait_state(emulator.jobs, vision.name,
                        {State.JOB_STATE_SUCCEEDED, State.JOB_STATE_FAILED}, timeout=60)
    assert vision.state == State.JOB_STATE_SUCCEEDED, vision.error
    assert not (folder / "checkpoints" / "planted").exists()
    # Each job's namespace goes with its runner.
    mine = job_network.prefix(emulator.data_dir)
    wait_for(lambda: not [n for n in os.listdir(job_network.NETNS_DIR) if n.startswith(mine)],
             timeout=30)


def test_team_user_names_are_derived_bounded_and_distinct() -> None:
    labels = ["vision", "a" * 63, "x; rm -rf / $(id)", "élan-équipe", "-", "VISION",
              "vision-"]
    names = [team_users.user_name(label) for label in labels]
    for name in names:
        assert re.fullmatch(r"lvt-[a-z0-9-]{1,18}-[0-9a-f]{8}", name) and len(name) <= 31, name
    assert len(set(names)) == len(labels)
    assert team_users.identity_for(None, "vision") is None  # no sandbox, no users
    default = sandbox.identity(sandbox.DEFAULT_USER)
    assert team_users.identity_for(default, "") == default  # unlabelled: the shared user
    made = team_users.identity_for(default, "x; rm -rf / $(id)")
    assert made is not None and made.name == names[2] and made.uid not in (0, default.uid)


def test_output_folders_are_the_teams_and_squatters_lose_them(tmp_path: Path) -> None:
    """A squatter's folder where a team's output goes is taken over with what is in it; a
    link planted on the path is replaced, never followed; folders above are the emulator's."""
    default = sandbox.identity(sandbox.DEFAULT_USER)
    vision = team_users.identity_for(default, "vision")
    speech = team_users.identity_for(default, "speech")
    assert default and vision and speech
    data = tmp_path / "lv"
    sandbox.prepare(data, default)
    jobs = data / "gcs" / "bucket" / "jobs"
    squatted = jobs / "vision" / "job-1"
    (squatted / "checkpoints").mkdir(parents=True)
    (squatted / "checkpoints" / "step-1").write_text("speech's")
    (squatted / "passwd").symlink_to("/etc/passwd")
    for path in (jobs.parent, jobs, jobs / "vision", squatted, squatted / "checkpoints",
                 squatted / "checkpoints" / "step-1"):
        os.chown(path, speech.uid, speech.gid)
    (jobs / "vision" / "job-2").symlink_to("/etc")

    for job in ("job-1", "job-2"):
        root = jobs / "vision" / job
        output_folders.prepare(data, root, [root / "model", root / "checkpoints"], vision,
                               default)
        for folder in (root, root / "model", root / "checkpoints"):
            info = folder.lstat()
            assert (info.st_uid, info.st_gid, info.st_mode & 0o7777) == (
                vision.uid, default.gid, output_folders.OUTPUT_MODE), folder
    for above in (jobs.parent, jobs, jobs / "vision"):
        info = above.stat()
        assert (info.st_uid, info.st_mode & 0o7777) == (0, output_folders.ABOVE_MODE), above
    step = (squatted / "checkpoints" / "step-1").stat()
    assert (step.st_uid, step.st_mode & 0o777) == (vision.uid, 0o640)
    assert Path("/etc").stat().st_uid == 0 and Path("/etc/passwd").stat().st_uid == 0
    assert (squatted / "passwd").lstat().st_uid == vision.uid

    def as_user(who: sandbox.Identity, *argv: str) -> int:
        return subprocess.run(list(argv), user=who.uid, group=who.gid, extra_groups=[],
                              capture_output=True, timeout=30).returncode

    assert as_user(speech, "cat", str(squatted / "checkpoints" / "step-1")) != 0
    assert as_user(speech, "ls", str(jobs)) != 0  # above: passable, not listable
    assert as_user(default, "cat", str(squatted / "checkpoints" / "step-1")) == 0  # serving
    assert as_user(vision, "touch", str(squatted / "model" / "weights")) == 0


def test_stale_namespaces_of_this_emulator_only_are_removed(tmp_path: Path) -> None:
    require(job_network.why_unavailable() is None, "ip and nsenter for network namespaces")
    mine = job_network.create(tmp_path / "a", "41")
    theirs = job_network.create(tmp_path / "b", "41")
    assert mine is not None and theirs is not None and mine != theirs
    try:
        assert job_network.remove_stale(tmp_path / "a") == [mine.name]
        assert not mine.exists() and theirs.exists()
    finally:
        job_network.remove(theirs)
    assert not theirs.exists()
