"""Idle clusters deleted by their team's policy (TeamPolicy.delete_idle_clusters_after_min):
the admins set the limit through the policy API (bounds checked, a refusal changes nothing);
the periodic task deletes, through the deletion a user asks for and so through the backend,
only a running cluster idle past its team's limit (not one running a Ray job, nor one that
ran something within the limit, nor a team's without a limit), says why in the audit log and
in a message to the team's channels, and does it once."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from controlplane.backends import errors
from controlplane.clusters import lifecycle, tasks
from controlplane.clusters.models import Cluster, RayJob
from controlplane.notifications import messages
from controlplane.notifications.models import Notification, SlackChannel
from controlplane.runs.models import Job, JobState
from controlplane.security.models import AuditEntry
from controlplane.teams import policy as team_policy
from controlplane.teams.models import Role, Team, TeamPolicy
from tests.people import make_user

pytestmark = pytest.mark.django_db
URL = "/api/v1/teams/vision/policy/"


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_admins_set_the_limit_within_its_bounds(team: Team, member: Any) -> None:
    admin = make_user("ada", team, Role.ADMIN)
    done = api(admin).patch(URL, {"delete_idle_clusters_after_min": 30}, format="json")
    assert done.status_code == 200, done.content
    assert done.json()["delete_idle_clusters_after_min"] == 30
    assert api(member).get(URL).json()["delete_idle_clusters_after_min"] == 30
    assert AuditEntry.objects.get(action="policy.update").detail["now"][
        "delete_idle_clusters_after_min"] == 30
    for bad, said in ((5, "5: 0 (never) or whole minutes from 10 to 10,080"),
                      (-1, "-1: 0 (never)"), (20_000, "20000: 0 (never)"),
                      ("soon", "A valid integer is required."),
                      (True, "A valid integer is required.")):
        refused = api(admin).patch(URL, {"delete_idle_clusters_after_min": bad,
                                         "allow_web_access": True}, format="json")
        assert refused.status_code == 400, (bad, refused.content)
        assert said in refused.json()["delete_idle_clusters_after_min"][0], refused.json()
    policy = TeamPolicy.objects.get(team=team)
    assert (policy.delete_idle_clusters_after_min, policy.allow_web_access) == (30, False)
    assert api(member).patch(URL, {"delete_idle_clusters_after_min": 0},
                             format="json").status_code == 403
    assert api(admin).patch(URL, {"delete_idle_clusters_after_min": 0},
                            format="json").json()["delete_idle_clusters_after_min"] == 0


class Backend:
    """The persistent resources as deletion asks Vertex: gone once deleted."""

    def __init__(self) -> None:
        self.deleted: list[str] = []

    def delete(self, name: str) -> Any:
        self.deleted.append(name)
        return type("Operation", (), {"name": f"{name}/operations/1", "done": False})()

    def get(self, name: str) -> Any:
        raise errors.NotFound(name)


def cluster(team: Team, user: Any, name: str, idle_for: timedelta | None = None,
            ray_state: str | None = None) -> Cluster:
    """A running cluster up for three hours; with a Ray job that ended `idle_for` ago, or one
    in `ray_state`."""
    now = timezone.now()
    made = Cluster.objects.create(
        team=team, created_by=user, name=name, region="us-central1", request={}, resource={},
        ray_version="2.47.1", state=Cluster.State.RUNNING, hourly_micros=2_500_000,
        running_since=now - timedelta(hours=3),
        vertex_name=f"projects/p/locations/us-central1/persistentResources/cp-{name}")
    if idle_for is not None:
        RayJob.objects.create(team=team, cluster=made, created_by=user, entrypoint=["true"],
                              state=RayJob.State.SUCCEEDED, ended_at=now - idle_for)
    if ray_state is not None:
        RayJob.objects.create(team=team, cluster=made, created_by=user, entrypoint=["true"],
                              state=ray_state)
    return made


def test_only_clusters_idle_past_their_team_s_limit_are_deleted_through_the_backend(
        team: Team, member: Any, queued: list[tuple[str, tuple]], monkeypatch: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    team_policy.update(team, {"delete_idle_clusters_after_min": 30})
    ops = SlackChannel(team=team, name="ops", kind="webhook", notify_on=["failed"])
    ops.set_secret("https://hooks.slack.com/services/T0001/B0001/idleidleidleidle")
    ops.save()
    other = Team.objects.create(name="Speech", slug="speech")  # no limit: never deleted
    theirs = cluster(other, make_user("oscar", other, Role.ADMIN), "theirs",
                     idle_for=timedelta(hours=2))
    idle = cluster(team, member, "idle", idle_for=timedelta(minutes=45))
    recent = cluster(team, member, "recent", idle_for=timedelta(minutes=20))
    busy = cluster(team, member, "busy", ray_state=RayJob.State.RUNNING)
    queued_ray = cluster(team, member, "queued", ray_state=RayJob.State.PENDING)
    placed = cluster(team, member, "placed")  # a job placed on it still runs
    Job.objects.create(team=team, created_by=member, name="on-placed", request={},
                       project="p", region="us-central1", state=JobState.RUNNING,
                       custom_job={"jobSpec": {"persistentResourceId":
                                               placed.vertex_resource_id}})

    with django_capture_on_commit_callbacks(execute=False):
        tasks.delete_idle_clusters()  # the beat's task, under its lease
        tasks.delete_idle_clusters()  # again: nothing more
    states = {c.name: c.state for c in Cluster.objects.all()}
    assert states == {"idle": "DELETING", "recent": "RUNNING", "busy": "RUNNING",
                      "queued": "RUNNING", "placed": "RUNNING", "theirs": "RUNNING"}
    assert queued == [(lifecycle.TASKS + "reconcile_cluster", (str(idle.pk),))]

    # Why, in the audit log (the team's admins read it) and in one message to the channel.
    [entry] = AuditEntry.objects.filter(action="cluster.delete_idle")
    assert (entry.actor_name, entry.via, entry.team_id, entry.target_id) == (
        "team policy", "policy", team.pk, str(idle.pk))
    assert entry.detail["reason"] == "deleted after 45 minutes idle, team policy 30"
    [sent] = Notification.objects.filter(channel=ops)
    text, blocks = messages.build(sent)
    assert text == "Cluster idle was deleted after 45 minutes idle, team policy 30"
    assert f"/clusters/{idle.pk}/|idle> of Vision was *deleted after 45 minutes idle, team " \
        "policy 30*" in blocks[0]["text"]["text"]

    # The deletion itself is the one a user asks for: the backend deletes the resource.
    backend = Backend()
    monkeypatch.setattr(lifecycle, "get_cluster_backend", lambda: backend)
    lifecycle.reconcile(idle.pk)
    assert backend.deleted == [idle.vertex_name]
    assert Cluster.objects.get(pk=idle.pk).state == Cluster.State.DELETED
    assert {recent.pk, busy.pk, queued_ray.pk, theirs.pk} <= set(
        Cluster.objects.filter(state=Cluster.State.RUNNING).values_list("pk", flat=True))
