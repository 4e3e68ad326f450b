"""An idle cluster in Slack: one message per idle period, however often the sweep looks,
through the one outbox, to the cluster's team only, with the names in it escaped."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from controlplane.clusters import idle, tasks
from controlplane.clusters.models import Cluster, IdleFlag, RayJob
from controlplane.notifications.models import Notification, NotificationStatus, SlackChannel
from controlplane.teams.models import Role, Team
from tests.notifications.slack_recorder import SlackRecorder
from tests.people import make_user

pytestmark = pytest.mark.django_db

HOOK = "https://hooks.slack.com/services/T0001/B0001/idleidleidleidle"
HOOK_PATH = "/services/T0001/B0001/idleidleidleidle"
OTHER_PATH = "/services/T0002/B0002/otherotherother"


def channel(team: Team, url: str, notify_on: list[str]) -> SlackChannel:
    made = SlackChannel(team=team, name="ops", kind="webhook", notify_on=notify_on)
    made.set_secret(url)
    made.save()
    return made


@pytest.fixture
def world(team: Team, settings: Any, slack: SlackRecorder, eager: None) -> dict[str, Any]:
    settings.CP_CLUSTER_IDLE_FLAG_S = 3600
    settings.CP_BASE_URL = "https://cp.example"
    team.name = "Vision <!channel> & co"
    team.save()
    # Idle clusters go to every enabled channel, whatever jobs it follows.
    channel(team, HOOK, notify_on=["failed"])
    other = Team.objects.create(name="Speech", slug="speech")
    channel(other, "https://hooks.slack.com" + OTHER_PATH, notify_on=["failed"])
    user = make_user("ann", team, Role.MEMBER)
    now = timezone.now()
    cluster = Cluster.objects.create(
        team=team, created_by=user, name="ray-a", region="us-central1", request={},
        resource={}, ray_version="2.47.1", state=Cluster.State.RUNNING,
        running_since=now - timedelta(hours=3), hourly_micros=2_500_000,
        vertex_name="projects/p/locations/us-central1/persistentResources/cp-cl-1")
    # Running, but not yet past the limit: nobody is told.
    Cluster.objects.create(
        team=team, created_by=user, name="ray-b", region="us-central1", request={},
        resource={}, state=Cluster.State.RUNNING, running_since=now - timedelta(minutes=30),
        hourly_micros=1_000_000)
    return {"cluster": cluster, "user": user, "now": now}


def sweep(capture: Any, now: Any = None) -> list[IdleFlag]:
    with capture(execute=True):
        return idle.flag_idle_clusters(now)


def test_the_idle_check_run_twice_sends_one_message(
        world: dict[str, Any], slack: SlackRecorder,
        django_capture_on_commit_callbacks: Any) -> None:
    cluster = world["cluster"]
    assert len(sweep(django_capture_on_commit_callbacks)) == 1
    assert sweep(django_capture_on_commit_callbacks) == []
    with django_capture_on_commit_callbacks(execute=True):
        tasks.reconcile_clusters()  # the beat's task looks too, and adds nothing
    [posted] = slack.to(HOOK_PATH)
    assert slack.to(OTHER_PATH) == []  # another team's channel hears nothing of it
    line = posted.body["blocks"][0]["text"]["text"]
    since = cluster.running_since.strftime("%Y-%m-%d %H:%M UTC")
    assert f"<https://cp.example/clusters/{cluster.pk}/|ray-a>" in line
    assert f"idle since {since}" in line and "$2.50 per hour" in line
    # The team's name is the users': it shows as written and pings nobody.
    assert "Vision &lt;!channel&gt; &amp; co" in line and "<!channel>" not in line
    assert posted.body["blocks"][1]["elements"][0]["url"] == \
        f"https://cp.example/clusters/{cluster.pk}/"
    assert "<!channel>" not in posted.text and "ray-a" in posted.text
    assert Notification.objects.get().status == NotificationStatus.SENT
    page = Client()
    page.force_login(world["user"])
    assert b"Slack channels were told" in page.get(f"/clusters/{cluster.pk}/").content


def test_a_cluster_busy_then_idle_again_sends_a_second_message(
        world: dict[str, Any], slack: SlackRecorder,
        django_capture_on_commit_callbacks: Any) -> None:
    cluster, now = world["cluster"], world["now"]
    sweep(django_capture_on_commit_callbacks, now)
    job = RayJob.objects.create(team=cluster.team, cluster=cluster, created_by=world["user"],
                                entrypoint=["python", "-c", "print(1)"],
                                state=RayJob.State.RUNNING)
    assert sweep(django_capture_on_commit_callbacks, now) == []  # busy: not idle
    # The job ended two hours ago: a new idle period, past the limit once more.
    job.transition(RayJob.State.SUCCEEDED, at=now - timedelta(hours=2))
    [second] = sweep(django_capture_on_commit_callbacks, now)
    assert second.idle_since == now - timedelta(hours=2)
    assert sweep(django_capture_on_commit_callbacks, now) == []
    posted = slack.to(HOOK_PATH)
    assert len(posted) == 2
    since = (now - timedelta(hours=2)).strftime("%Y-%m-%d %H:%M UTC")
    assert f"idle since {since}" in posted[1].body["blocks"][0]["text"]["text"]


def test_a_period_shorter_than_the_limit_is_not_flagged(
        world: dict[str, Any], slack: SlackRecorder,
        django_capture_on_commit_callbacks: Any) -> None:
    cluster, now = world["cluster"], world["now"]
    RayJob.objects.create(team=cluster.team, cluster=cluster, created_by=world["user"],
                          entrypoint=["true"], state=RayJob.State.SUCCEEDED,
                          ended_at=now - timedelta(minutes=59))
    assert sweep(django_capture_on_commit_callbacks, now) == []
    assert slack.to(HOOK_PATH) == [] and not IdleFlag.objects.exists()
