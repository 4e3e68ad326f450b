"""The emulator's services answer only the control plane (issue 40, door 2), and Redis only a
client with its password (door 5).

Every call to the emulator's gRPC port and to its admin service (a port of its own) must carry
the emulator's token (localvertex/auth.py): without it, or with another, the answer is
UNAUTHENTICATED, in the same words, before any handler runs. The control plane holds the token;
a replica's environment holds neither it nor Redis' password, even where the emulator's own
environment has both (the stacks give the emulator the app's environment). Google's SDK gets
through with the token given as a user's access token, and not without it.

The test stacks use the machine's shared Redis (127.0.0.1:6379, no password, shared with CI),
which these tests do not reconfigure: a Redis of their own with `requirepass` shows that the
settings put REDIS_PASSWORD into the broker's, cache's and live pages' URLs and that Redis
refuses those URLs without it; docker-compose.yml runs Redis that way.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import grpc
import pytest
import redis
import yaml
from google.api_core import exceptions as gexc
from google.cloud import aiplatform, aiplatform_v1
from google.cloud.aiplatform_v1.services.job_service.transports import JobServiceGrpcTransport
from google.cloud.logging_v2.types import TailLogEntriesRequest

from config.devstack import ROOT
from config.ports import reserve_port
from localvertex import auth
from localvertex.admin.client import AdminClient
from localvertex.client import logging_client
from tests.conftest import require
from tests.localvertex.helpers import (
    FAST_FLAGS,
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
from tests.localvertex.sdk import sdk_channel

State = aiplatform_v1.JobState
# What the control plane's processes have in their environment (config/devstack.py gives the
# emulator the same): none of it may reach a replica.
REDIS_PASSWORD = "redis-password-of-the-stack-4821"
CONTROL_PLANE_ENV = {
    "VERTEX_EMULATOR_TOKEN": "the-control-planes-token-value",
    "VERTEX_EMULATOR_TOKEN_FILE": "/run/lv-token/token",
    "REDIS_PASSWORD": REDIS_PASSWORD,
    "REDIS_PASSWORD_FILE": "/run/cp-secrets/redis_password",
    "REDIS_URL": f"redis://:{REDIS_PASSWORD}@127.0.0.1:6379/0",
    "CELERY_BROKER_URL": f"redis://:{REDIS_PASSWORD}@127.0.0.1:6379/0",
    "CP_CACHE_URL": f"redis://:{REDIS_PASSWORD}@127.0.0.1:6379/1",
    "CP_LIVE_URL": f"redis://:{REDIS_PASSWORD}@127.0.0.1:6379/0",
    "LOCALVERTEX_TOKEN_FILE": "/run/lv-token/token",
}
PRINT_ENVIRONMENT = "import json, os; print(json.dumps({'environ': dict(os.environ)}))"


@pytest.fixture(scope="module")
def emulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmulatorProcess]:
    with pytest.MonkeyPatch.context() as patch:
        for name, value in CONTROL_PLANE_ENV.items():
            patch.setenv(name, value)
        running = EmulatorProcess(tmp_path_factory.mktemp("credentials") / "lv", FAST_FLAGS)
        running.start()
    yield running
    running.stop()


def _code(call) -> tuple[grpc.StatusCode, str]:
    try:
        call()
    except grpc.RpcError as exc:
        return exc.code(), exc.details()
    except gexc.GoogleAPICallError as exc:
        return exc.grpc_status_code, exc.message
    return grpc.StatusCode.OK, ""


def test_without_the_token_every_service_says_unauthenticated(emulator: EmulatorProcess
                                                              ) -> None:
    token_file = emulator.data_dir / auth.TOKEN_FILE
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    victim = emulator.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        "victim", [python_pool("import time; time.sleep(60)")]))

    refused = (grpc.StatusCode.UNAUTHENTICATED, auth.REFUSED)
    for channel in (grpc.insecure_channel(emulator.address),
                    auth.channel(emulator.address, "a-guess"),
                    auth.channel(emulator.address, emulator.token[:-1])):
        jobs = aiplatform_v1.JobServiceClient(transport=JobServiceGrpcTransport(channel=channel))
        assert _code(lambda jobs=jobs: jobs.list_custom_jobs(parent=PARENT)) == refused
        assert _code(lambda jobs=jobs: jobs.cancel_custom_job(name=victim.name)) == refused
        # A stream is refused as a stream; a method that does not exist says nothing more.
        tail = channel.stream_stream(
            "/google.logging.v2.LoggingServiceV2/TailLogEntries",
            request_serializer=TailLogEntriesRequest.serialize)
        assert _code(lambda tail=tail: list(tail(iter([TailLogEntriesRequest(
            resource_names=[f"projects/{PROJECT}"])]), timeout=10))) == refused
        assert _code(lambda channel=channel: channel.unary_unary("/no.Such/Method")(
            b"", timeout=10)) == refused
        channel.close()
    # The admin service: on its own port, never on Vertex's, and with the same refusal.
    plain = grpc.insecure_channel(emulator.admin_address)
    assert _code(lambda: plain.unary_unary("/localvertex.v1.Admin/SetFaults")(
        b'{"rate": 1.0}', timeout=10)) == refused
    plain.close()
    with AdminClient(emulator.admin_address, "a-guess") as guesser:
        assert _code(lambda: guesser.set_faults("*", "UNAVAILABLE", 1.0)) == refused
        assert _code(lambda: guesser.preempt(victim.name)) == refused
    with AdminClient(emulator.address, emulator.token) as wrong_port:
        assert _code(lambda: wrong_port.job(victim.name))[0] == grpc.StatusCode.UNIMPLEMENTED

    # Nothing of the refused calls happened; with the token, everything answers.
    assert emulator.jobs.get_custom_job(name=victim.name).state != State.JOB_STATE_CANCELLED
    assert victim.name in [j.name for j in emulator.jobs.list_custom_jobs(parent=PARENT)]
    with emulator.admin() as admin:
        assert "faults" in admin.set_faults("*", "UNAVAILABLE", 0.0)
        assert admin.job(victim.name)["state"]
    logs = logging_client(emulator.address, emulator.token)
    assert list(logs.list_log_entries(resource_names=[f"projects/{PROJECT}"],
                                      filter='logName="projects/none/logs/none"')) == []
    emulator.jobs.cancel_custom_job(name=victim.name)
    wait_state(emulator.jobs, victim.name, State.JOB_STATE_CANCELLED)


def test_googles_sdk_gets_through_with_the_token_as_its_credentials(
        emulator: EmulatorProcess, monkeypatch: pytest.MonkeyPatch) -> None:
    with sdk_channel(monkeypatch, emulator):
        assert isinstance(aiplatform.CustomJob.list(), list)
    guesser: Any = SimpleNamespace(address=emulator.address, token="a-guess",
                                   storage_host=emulator.storage_host)
    with sdk_channel(monkeypatch, guesser), pytest.raises(gexc.Unauthenticated) as refused:
        aiplatform.CustomJob.list()
    assert auth.REFUSED in str(refused.value)


def test_a_replica_holds_neither_the_token_nor_redis_password(emulator: EmulatorProcess
                                                              ) -> None:
    job = emulator.jobs.create_custom_job(parent=PARENT, custom_job=custom_job(
        "environment", [python_pool(PRINT_ENVIRONMENT)], labels={"cp-team": "speech"}))
    job = wait_state(emulator.jobs, job.name, {State.JOB_STATE_SUCCEEDED,
                                               State.JOB_STATE_FAILED})
    assert job.state == State.JOB_STATE_SUCCEEDED, job.error
    [said] = [p["environ"] for p in json_entries(
        entries(emulator.logs, f'resource.labels.job_id="{job_id(job)}"')) if "environ" in p]
    assert not set(said) & set(CONTROL_PLANE_ENV), sorted(said)
    everything = json.dumps(said)
    for secret in (emulator.token, REDIS_PASSWORD, CONTROL_PLANE_ENV["VERTEX_EMULATOR_TOKEN"]):
        assert secret not in everything


@pytest.fixture
def redis_with_a_password(tmp_path: Path) -> Iterator[int]:
    """A Redis of the test's own that requires REDIS_PASSWORD (the shared one stays as it is)."""
    server = shutil.which("redis-server")
    require(server is not None, "redis-server (Debian's redis-server package)")
    port = reserve_port()
    conf = tmp_path / "redis.conf"
    conf.write_text(f"port {port}\nbind 127.0.0.1\nrequirepass {REDIS_PASSWORD}\nsave \"\"\n"
                    f"appendonly no\ndir {tmp_path}\n")
    proc = subprocess.Popen([server, str(conf)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert time.monotonic() < deadline and proc.poll() is None, "redis did not start"
            time.sleep(0.05)
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_settings_give_redis_its_password_and_redis_refuses_without_it(
        redis_with_a_password: int, tmp_path: Path) -> None:
    port = redis_with_a_password
    password_file = tmp_path / "redis_password"
    password_file.write_text(REDIS_PASSWORD + "\n")
    # The settings module as a fresh process reads it (this one's settings are long loaded).
    read = ("import json, runpy; s = runpy.run_path('config/settings.py'); "
            "print(json.dumps([s['REDIS_URL'], s['CELERY_BROKER_URL'], s['CACHES']['default']"
            "['LOCATION'], s['CP_LIVE_URL']]))")
    env = {**{k: v for k, v in os.environ.items() if k not in CONTROL_PLANE_ENV}, "DEBUG": "true",
           "DATABASE_URL": "sqlite://", "REDIS_PASSWORD_FILE": str(password_file),
           "REDIS_URL": f"redis://127.0.0.1:{port}/0",
           "CELERY_BROKER_URL": f"redis://127.0.0.1:{port}/0",
           "CP_CACHE_URL": f"redis://127.0.0.1:{port}/1"}
    done = subprocess.run([sys.executable, "-c", read], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    urls = json.loads(done.stdout.strip().splitlines()[-1])
    for url in urls:
        assert url.startswith(f"redis://:{REDIS_PASSWORD}@127.0.0.1:{port}/"), url
        assert redis.Redis.from_url(url, socket_timeout=5).ping()
        bare = url.replace(f":{REDIS_PASSWORD}@", "")
        with pytest.raises(redis.AuthenticationError):
            redis.Redis.from_url(bare, socket_timeout=5).ping()
        with pytest.raises(redis.AuthenticationError):
            redis.Redis.from_url(url.replace(REDIS_PASSWORD, "a-guess"), socket_timeout=5).ping()


def test_compose_keeps_redis_behind_a_password_and_the_emulator_behind_its_token() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    assert services["redis"]["command"] == ["redis-server", "/run/redis/redis.conf"]
    assert services["redis"]["volumes"] == ["redis-conf:/run/redis:ro"]
    for name in ("migrate", "web", "worker", "beat"):
        env = services[name]["environment"]
        assert env["REDIS_PASSWORD_FILE"].startswith("/run/cp-secrets/"), name
        assert env["VERTEX_EMULATOR_TOKEN_FILE"] == "/run/lv-token/token", name
        assert "VERTEX_EMULATOR_TOKEN" not in env and "REDIS_PASSWORD" not in env, name
    emulator = services["localvertex"]
    argv = emulator["command"].split()
    assert argv[argv.index("--token-file") + 1] == "/run/lv-token/token"
    assert "--admin-port" in argv
    # The emulator (and so what it runs) mounts the token alone: not the key, not Redis'.
    assert sorted(emulator["volumes"]) == ["emulator-token:/run/lv-token:ro",
                                           "localvertex:/data"]
    assert "environment" not in emulator


def test_compose_secrets_are_made_once_and_owner_only(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "config"))
    try:
        import compose_secrets
    finally:
        sys.path.remove(str(ROOT / "config"))
    folders = [tmp_path / name for name in ("app", "redis", "token")]
    for folder in folders:
        folder.mkdir()
    compose_secrets.main(*folders)
    first = {p: p.read_text() for folder in folders for p in folder.iterdir()}
    compose_secrets.main(*folders)
    assert {p: p.read_text() for p in first} == first  # kept across restarts
    password = (folders[0] / "redis_password").read_text()
    assert (folders[1] / "redis.conf").read_text() == f"requirepass {password}\n"
    for path in (folders[0] / "secret_key", folders[0] / "redis_password", folders[2] / "token"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert auth.read(folders[2] / "token")
