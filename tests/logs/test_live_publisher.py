"""The live push leaves the committing thread: a page's store returns while Redis has not
answered its question yet, and the page is sent once Redis answers."""

from __future__ import annotations

import socket
import threading
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from config.ports import reserve_port
from controlplane.logs import live
from controlplane.logs.store import Target, store_entries
from controlplane.runs.models import Job, JobState
from controlplane.teams.models import Role, Team
from tests.people import make_user
from vertexplan.logparse.entries import LogEntry


class HeldRedis:
    """A proxy in front of the real Redis that holds Redis's answer to the question of who
    watches (PUBSUB NUMSUB) until released, and keeps what the client sent after it."""

    def __init__(self, redis_url: str) -> None:
        parts = urlsplit(redis_url)
        self.upstream = (parts.hostname or "127.0.0.1", parts.port or 6379)
        self.port = reserve_port()
        self.listener = socket.create_server(("127.0.0.1", self.port))
        self.asked = threading.Event()
        self.release = threading.Event()
        self.after: list[bytes] = []
        self.published = threading.Event()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self) -> None:
        client, _ = self.listener.accept()
        server = socket.create_connection(self.upstream)
        threading.Thread(target=self.pump_up, args=(client, server), daemon=True).start()
        threading.Thread(target=self.pump_down, args=(server, client), daemon=True).start()

    def pump_up(self, client: socket.socket, server: socket.socket) -> None:
        while chunk := client.recv(65536):
            if self.asked.is_set():
                self.after.append(chunk)
                if b"PUBLISH" in chunk:
                    self.published.set()
            elif b"NUMSUB" in chunk:
                self.asked.set()  # before Redis can answer it
            server.sendall(chunk)

    def pump_down(self, server: socket.socket, client: socket.socket) -> None:
        while chunk := server.recv(65536):
            if self.asked.is_set():
                self.release.wait(30)
            client.sendall(chunk)


def test_a_stalled_redis_does_not_hold_the_store(
        settings: Any, team: Team, redis_url: str,
        django_capture_on_commit_callbacks: Any) -> None:
    held = HeldRedis(redis_url)
    settings.CP_LIVE_URL = f"redis://127.0.0.1:{held.port}/0"
    user = make_user("ann", team, Role.MEMBER)
    job = Job.objects.create(team=team, created_by=user, name="exp", request={},
                             custom_job={}, project="p", region="us-central1",
                             state=JobState.RUNNING)
    entry = LogEntry(insert_id="a1", timestamp=datetime.now(UTC), severity=200, job_id="81",
                     task_name="workerpool0-0", text_payload="hello")
    try:
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            stored = store_entries([entry], {"81": Target(job.pk, 1)})
        # Committed and returned with the question to Redis unanswered.
        assert stored.lines == 1 and len(callbacks) == 1
        assert held.asked.wait(30), "the publishing thread asks Redis who watches"
        with django_capture_on_commit_callbacks(execute=True):
            live.publish(job.pk, "state", {"state": "RUNNING", "active": True})
    finally:
        held.release.set()
    # Answered (nobody watches the page's job: nothing to send for it), the thread sends the
    # state change, submitted after the page.
    assert held.published.wait(30)
    sent = b"".join(held.after)
    assert sent.count(b"PUBLISH") == 1 and live.channel(job.pk).encode() in sent
