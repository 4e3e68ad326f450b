"""The queue in front of Vertex on the database: the issue's 16-A100 scenario as admission
ticks (A borrows 8; B's high-priority 8 stops A at a checkpoint; B runs; A resumes from its
checkpoint), refusals, and the team quota API (site admins write, team admins read)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from controlplane.backends.base import RemoteJob
from controlplane.notifications import messages
from controlplane.notifications.models import Notification
from controlplane.runs import admission
from controlplane.runs.models import Job, JobAttempt, JobState, display_name_for
from controlplane.teams.models import Role, Team, TeamQuota
from tests.notifications.test_slack import channel
from tests.people import make_user

A100 = "NVIDIA_TESLA_A100"
METRIC = "aiplatform.googleapis.com/custom_model_training_nvidia_a100_gpus"
PROJECT = "fairshare-test-project"  # its own key in the shared quota cache


@pytest.fixture
def project_quota(settings: Any) -> Iterator[Any]:
    """The Cloud Quotas API's answer as the control plane caches it: 16 A100 in us-central1."""
    settings.VERTEX_PROJECT = PROJECT
    settings.CP_QUOTA_CACHE_S = 300.0
    key = f"cp-quotas:1:{settings.VERTEX_EMULATOR_ADDR}:{PROJECT}"

    def set_to(n: int) -> None:
        cache.set(key, {METRIC: {"quota_id": "CustomModelTrainingA100GPUsPerProjectPerRegion",
                                 "display": "A100", "regions": {"us-central1": n}}}, 300)

    set_to(16)
    yield set_to
    cache.delete(key)


def quotas(*teams: Team) -> None:
    for team in teams:
        TeamQuota.objects.create(team=team, max_priority="high", flavors=[
            {"accelerator": A100, "region": "us-central1", "spot": False, "guarantee": 8,
             "borrowing_limit": 8}])


def job(team: Team, user: Any, gpus: int, *, priority: str = "normal",
        state: str = JobState.QUEUED_LOCAL) -> Job:
    spec = {"jobSpec": {"workerPoolSpecs": [{
        "machineSpec": {"machineType": "a2-highgpu-8g", "acceleratorType": A100,
                        "acceleratorCount": 8},
        "replicaCount": gpus // 8,
        "containerSpec": {"imageUri": "trainer"}}]}}
    made = Job.objects.create(team=team, created_by=user, name=f"{team.slug}-{gpus}",
                              request={}, custom_job=spec, project=PROJECT,
                              region="us-central1", state=state, priority=priority)
    JobAttempt.objects.create(job=made, number=1, display_name=display_name_for(made.pk, 1),
                              region="us-central1")
    return made


def runs(backend: Any, made: Job, *, checkpoint_step: int | None = None) -> str:
    """The job admitted and running on the backend (what submit and reconcile would do)."""
    made.refresh_from_db()
    name = f"{backend.parent}/customJobs/{made.pk}{made.attempt}"
    backend.jobs[name] = RemoteJob(name=name, display_name=display_name_for(made.pk,
                                                                             made.attempt),
                                   state="JOB_STATE_RUNNING", labels={})
    JobAttempt.objects.filter(job=made, number=made.attempt).update(vertex_name=name)
    made.update_state(JobState.RUNNING, source="test")
    if checkpoint_step is not None:
        made.events.create(kind="checkpoint_saved", attempt=made.attempt, step=checkpoint_step,
                           data={"step": checkpoint_step, "path": f"gs://b/ckpt/{checkpoint_step}"})
    return name


def state_of(made: Job) -> str:
    made.refresh_from_db()
    return made.state


def test_the_issue_scenario_through_admission_ticks(
        team: Team, other_team: Team, backend: Any, project_quota: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    ann, bob = make_user("ann", team, Role.MEMBER), make_user("bob", other_team, Role.MEMBER)
    quotas(team, other_team)
    channel(team, ["queue"])
    a = job(team, ann, 16)
    with django_capture_on_commit_callbacks(execute=False) as queued:
        d = admission.tick()
        assert d.admit == [str(a.pk)], d
    # Its submission, and the Slack message's delivery.
    assert state_of(a) == JobState.QUEUED and len(queued) == 2
    first_run = runs(backend, a, checkpoint_step=40)

    b = job(other_team, bob, 8, priority="high")
    decisions = admission.tick()
    assert [p.job_id for p in decisions.preempt] == [str(a.pk)]
    # A is requeued behind a new attempt while its run saves and stops: Vertex's cancel sends
    # the replicas SIGTERM, as a spot preemption does.
    a.refresh_from_db()
    assert (a.state, a.attempt, a.queue["stopping"]["vertex_name"]) == (
        JobState.QUEUED_LOCAL, 2, first_run)
    assert backend.cancelled == [first_run]
    assert a.events.get(kind="requeued").data["for_team"] == "speech"
    # It waits again from its requeue (how long it has waited decides whether it holds
    # capacity), its age still from its submission.
    planned = admission._plan_job(a, {}, set(), set(), waiting=True)
    assert planned.queued_at == a.attempts.get(number=2).created_at.timestamp()
    assert planned.submitted_at == a.created_at.timestamp()
    b.refresh_from_db()
    assert b.state == JobState.QUEUED_LOCAL and "checkpoint" in b.queue["reason"]

    # Still stopping: nothing starts over the quota, nothing more is stopped. Had the cancel
    # been lost (the run still RUNNING), the round asks again.
    backend.set_state(first_run, "JOB_STATE_RUNNING")
    decisions = admission.tick()
    assert (decisions.admit, decisions.preempt) == ([], [])
    assert backend.cancelled == [first_run, first_run]

    backend.set_state(first_run, "JOB_STATE_CANCELLED")
    assert admission.tick().admit == [str(b.pk)]
    a.refresh_from_db()
    assert a.queue == {"reason": a.queue["reason"], "place": 1}
    assert "8 of 16" in a.queue["reason"]
    runs(backend, b)
    # With B's timeout known, A's place says when it could start at the earliest.
    b.refresh_from_db()
    b.custom_job["jobSpec"]["scheduling"] = {"timeout": "7200s"}
    b.save(update_fields=["custom_job"])
    admission.tick()
    a.refresh_from_db()
    assert a.queue["earliest_start"] == (b.started_at + timedelta(hours=2)).isoformat()

    b.update_state(JobState.SUCCEEDED, source="test")
    assert admission.tick().admit == [str(a.pk)]
    resumed = a.attempts.get(number=2)
    assert (resumed.resume_step, resumed.reason) == (40, "requeue")
    # Team vision's channel heard of each: admitted, stopped for speech, admitted again.
    told = [(n.detail["what"], n.detail["attempt"]) for n in
            Notification.objects.filter(job=a, event="queue").order_by("pk")]
    assert told == [("admitted", 1), ("stopped", 2), ("admitted", 2)]
    stopped = Notification.objects.get(job=a, event="queue", detail__what="stopped")
    assert "team speech" in messages.headline(stopped)


def test_a_clusters_accelerators_count_against_its_team_and_the_project(
        team: Team, other_team: Team, backend: Any, project_quota: Any) -> None:
    from controlplane.clusters.models import Cluster

    ann, bob = make_user("ann", team, Role.MEMBER), make_user("bob", other_team, Role.MEMBER)
    quotas(team, other_team)
    # Vision's cluster may scale to 2 replicas of 8 A100: the project's whole quota.
    cluster = Cluster.objects.create(
        team=team, created_by=ann, name="ray", region="us-central1", request={},
        state=Cluster.State.RUNNING, created_at=timezone.now() - timedelta(hours=2),
        resource={"resourcePools": [{
            "id": "gpus", "replicaCount": "1",
            "autoscalingSpec": {"minReplicaCount": "1", "maxReplicaCount": "2"},
            "machineSpec": {"machineType": "a2-highgpu-8g", "acceleratorType": A100,
                            "acceleratorCount": 8}}]})
    speech = job(other_team, bob, 8, priority="high")
    decisions = admission.tick()
    # Within speech's guarantee, but nothing is free and a cluster is never stopped for it.
    assert (decisions.admit, decisions.preempt) == ([], [])
    speech.refresh_from_db()
    assert speech.state == JobState.QUEUED_LOCAL and speech.queue["place"] == 1
    # Its two hours count in vision's share; the quota API counts what it holds.
    state, _ = admission.plan_state(timezone.now(), [])
    [flavor] = state.usage["vision"]
    assert state.usage["vision"][flavor] == pytest.approx(16 * 7200, rel=0.01)
    TeamQuota.objects.filter(team=team).update(flavors=[
        {"accelerator": A100, "region": "us-central1", "spot": False, "guarantee": 8,
         "borrowing_limit": 0}])
    assert [(o["held"], o["allowed"]) for o in admission.over_quota(
        team, TeamQuota.objects.get(team=team))] == [(16, 8)]
    # The queue page: with the cluster holding vision's guarantee, a job of its own borrows.
    beside = job(team, ann, 8, state=JobState.QUEUED)
    runs(backend, beside)
    [row] = [r for r in admission.queue_rows([team.pk]) if r["id"] == beside.pk]
    assert row["borrowing"]
    beside.update_state(JobState.SUCCEEDED, source="test")
    # A job placed on the cluster runs on its machines: it asks the quota for nothing.
    placed = job(team, ann, 8)
    placed.custom_job["jobSpec"]["persistentResourceId"] = "ray"
    placed.save(update_fields=["custom_job"])
    assert admission.tick().admit == [str(placed.pk)]
    # Once the cluster is deleted, what it held is free.
    cluster.state, cluster.deleted_at = Cluster.State.DELETED, timezone.now()
    cluster.save(update_fields=["state", "deleted_at"])
    assert admission.tick().admit == [str(speech.pk)]


def test_a_cluster_that_could_never_be_held_is_refused_with_the_figures(
        team: Team, other_team: Team, backend: Any, settings: Any, project_quota: Any) -> None:
    from controlplane.clusters import lifecycle
    from controlplane.clusters.models import Cluster

    settings.CP_ADMISSION = True
    quotas(team, other_team)
    ann = make_user("ann", team, Role.MEMBER)

    def request(replicas: int) -> dict[str, Any]:
        return {"name": "gpus", "pools": [
            {"id": "head", "machine_type": "n1-standard-4"},
            {"id": "workers", "machine_type": "a2-highgpu-8g", "accelerator_type": A100,
             "accelerator_count": 8, "replica_count": replicas}], "ray": {"version": "2.47.1"}}

    # 16 A100 fit the project but not vision's guarantee of 8: a cluster is never stopped for
    # another team, so it may not borrow.
    with pytest.raises(lifecycle.ClusterError) as refused:
        lifecycle.create_cluster(team=team, user=ann, request=request(2))
    assert refused.value.fields["pools"] == [
        "the cluster needs 16 NVIDIA_TESLA_A100 in us-central1 (on-demand) at once but 8 is "
        "team vision's guarantee, and a cluster may not borrow; use at most 8"]
    assert not Cluster.objects.exists()
    cluster = lifecycle.create_cluster(team=team, user=ann, request=request(1))
    cluster.transition(Cluster.State.RUNNING)
    # Scaling past the project's whole quota is refused the same way, and changes nothing.
    with pytest.raises(lifecycle.ClusterError) as refused:
        lifecycle.set_replicas(cluster, {"workers": 3})
    assert "24 NVIDIA_TESLA_A100 in us-central1 (on-demand) at once but 16 is the project's " \
           "whole Vertex quota" in refused.value.fields["replicas"][0]
    cluster.refresh_from_db()
    assert cluster.state == Cluster.State.RUNNING
    assert cluster.resource["resourcePools"][1]["replicaCount"] in ("1", 1)
    # With the queue off, nothing is refused for the quotas.
    settings.CP_ADMISSION = False
    assert lifecycle.create_cluster(team=team, user=ann, request={**request(2), "name": "big"})


def test_a_job_bigger_than_the_project_quota_fails_with_the_figures(
        team: Team, backend: Any, project_quota: Any) -> None:
    huge = job(team, make_user("ann", team, Role.MEMBER), 24)
    assert admission.tick().admit == []
    huge.refresh_from_db()
    assert huge.state == JobState.FAILED
    assert "needs 24 NVIDIA_TESLA_A100 in us-central1 (on-demand) at once but 16 is the " \
           "project's whole Vertex quota" in huge.error_message


def test_a_wait_past_the_teams_limit_is_told_once_per_wait(
        team: Team, other_team: Team, backend: Any, project_quota: Any) -> None:
    ann, ada = make_user("ann", team, Role.MEMBER), make_user("ada", team, Role.ADMIN)
    quotas(team, other_team)
    channel(team, ["queue"])
    client = Client()
    client.force_login(ada)

    def policy(body: Any) -> Any:
        return client.patch("/api/v1/teams/vision/policy/", json.dumps(body),
                            content_type="application/json")

    for bad in (5, -1, 20_000, True, "soon"):
        refused = policy({"queue_wait_alert_min": bad, "allow_web_access": True})
        assert refused.status_code == 400, (bad, refused.content)
        assert "queue_wait_alert_min" in refused.json(), refused.json()
    assert "15 to 10,080" in policy({"queue_wait_alert_min": 5}).json()[
        "queue_wait_alert_min"][0]
    assert policy({"queue_wait_alert_min": 30}).json()["queue_wait_alert_min"] == 30

    first = job(team, ann, 16)
    assert admission.tick().admit == [str(first.pk)]
    runs(backend, first)
    # Its team holds all it may (8 + 8 borrowed): the next one waits.
    second = job(team, ann, 8)

    def waits(minutes: int) -> list[Notification]:
        Job.objects.filter(pk=second.pk).update(
            created_at=timezone.now() - timedelta(minutes=minutes))
        assert admission.tick().admit == []
        return list(Notification.objects.filter(job=second, event="queue"))

    assert waits(29) == []
    [told] = waits(31)
    assert (told.detail["what"], told.detail["limit_min"], told.detail["waited_min"],
            told.detail["place"]) == ("waiting", 30, 31, 1)
    headline = messages.headline(told)
    assert "waited 31 minutes" in headline and "limit: 30" in headline, headline
    assert told.detail["reason"] and told.detail["reason"] in headline
    # Told once: later rounds keep the mark and add nothing.
    assert waits(90) == [told]
    second.refresh_from_db()
    assert second.queue[admission.WAIT_ALERTED] == 1 and second.queue["place"] == 1
    # A team that asks nothing hears nothing.
    policy({"queue_wait_alert_min": 0})
    third = job(team, ann, 8)
    Job.objects.filter(pk=third.pk).update(created_at=timezone.now() - timedelta(hours=5))
    admission.tick()
    assert not Notification.objects.filter(job=third).exists()


# --- the quota API ------------------------------------------------------------------------------

BODY = {"flavors": [{"accelerator": A100, "region": "us-central1", "spot": False,
                     "guarantee": 8, "borrowing_limit": 8}],
        "max_priority": "high", "preempt_without_checkpoint": False}


def put(client: Client, slug: str, body: Any) -> Any:
    return client.put(f"/api/v1/teams/{slug}/quotas/", json.dumps(body),
                      content_type="application/json")


def test_site_admins_set_quotas_team_admins_read_them(team: Team, other_team: Team,
                                                        backend: Any) -> None:
    site = get_user_model().objects.create_user(username="root", is_staff=True)
    admin, member = make_user("ada", team, Role.ADMIN), make_user("mo", team, Role.MEMBER)
    client = Client()
    client.force_login(site)
    answer = put(client, "vision", BODY)
    assert answer.status_code == 200, answer.content
    assert answer.json()["flavors"] == BODY["flavors"] and answer.json()["over"] == []

    client.force_login(admin)
    assert client.get("/api/v1/teams/vision/quotas/").json()["max_priority"] == "high"
    # A team's admins may not raise their own share; other teams' quotas are not theirs.
    assert put(client, "vision", {**BODY, "max_priority": "low"}).status_code == 403
    assert client.get("/api/v1/teams/speech/quotas/").status_code == 404
    client.force_login(member)
    assert client.get("/api/v1/teams/vision/quotas/").status_code == 403
    assert TeamQuota.objects.get(team=team).max_priority == "high"


def test_a_bad_quota_is_refused_by_field_and_changes_nothing(team: Team, backend: Any) -> None:
    client = Client()
    client.force_login(get_user_model().objects.create_user(username="root", is_staff=True))
    bad = {"flavors": [{"accelerator": "NVIDIA_A100", "region": "us-central1", "guarantee": -1,
                        "borrowing_limit": "lots"}], "max_priority": "urgent"}
    answer = put(client, "vision", bad)
    assert answer.status_code == 400
    errors = answer.json()
    assert set(errors) >= {"flavors[0].accelerator", "flavors[0].guarantee",
                           "flavors[0].borrowing_limit", "max_priority"}, errors
    assert "NVIDIA_TESLA_A100" in str(errors["flavors[0].accelerator"])
    assert not TeamQuota.objects.filter(team=team).exists()


def test_a_quota_below_the_running_jobs_is_accepted_and_said(
        team: Team, backend: Any, project_quota: Any) -> None:
    running = job(team, make_user("ann", team, Role.MEMBER), 16, state=JobState.QUEUED)
    runs(backend, running)
    client = Client()
    client.force_login(get_user_model().objects.create_user(username="root", is_staff=True))
    answer = put(client, "vision", {**BODY, "flavors": [{**BODY["flavors"][0],
                                                         "borrowing_limit": 0}]})
    assert answer.status_code == 200
    over = answer.json()["over"]
    assert [(o["held"], o["allowed"]) for o in over] == [(16, 8)]
    assert "no new job" in over[0]["note"]
    assert state_of(running) == JobState.RUNNING
    assert settings.VERTEX_PROJECT == PROJECT


# --- submission with the queue on ------------------------------------------------------------

A100_8 = {"machine_type": "a2-highgpu-8g", "accelerator_type": A100, "accelerator_count": 8}


def checked(team: Team, **body: Any) -> Any:
    from controlplane.compose import validation

    return validation.check(validation.read_request(
        {"name": "q", "chief": A100_8, "region": "us-central1", **body}), team)


def test_with_the_queue_on_a_job_waits_here_with_its_priority(
        team: Team, settings: Any, make_job: Any, project_quota: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    settings.CP_ADMISSION = True
    TeamQuota.objects.create(team=team, max_priority="normal")
    with django_capture_on_commit_callbacks(execute=False) as queued:
        made = make_job("q", chief=A100_8, priority="low")
    assert (made.state, made.priority, queued) == (JobState.QUEUED_LOCAL, "low", [])
    assert made.events.get(kind="state").data["to"] == JobState.QUEUED_LOCAL


def test_a_priority_above_the_cap_and_a_job_over_the_project_quota_are_refused(
        team: Team, settings: Any, project_quota: Any) -> None:
    settings.CP_ADMISSION = True
    TeamQuota.objects.create(team=team, max_priority="normal")
    errors = checked(team, priority="high").errors
    assert errors["priority"] == ["team vision's jobs may ask for at most normal priority (set "
                                  "by the site's admins); high is above it"]
    errors = checked(team, chief={**A100_8}, workers={**A100_8, "replica_count": 2}).errors
    assert "needs 24 NVIDIA_TESLA_A100 in us-central1 (on-demand) at once but 16 is the " \
           "project's whole Vertex quota" in errors["accelerators"][0]
    assert checked(team, priority="normal").ok


def test_validate_and_the_compose_page_say_where_a_new_job_would_land(
        team: Team, other_team: Team, backend: Any, settings: Any, project_quota: Any) -> None:
    settings.CP_ADMISSION = True
    quotas(team, other_team)
    ann, bob = make_user("ann", team, Role.MEMBER), make_user("bob", other_team, Role.MEMBER)
    client = Client()

    def landing(user: Any, slug: str) -> Any:
        """What validate says of an 8-A100 job of team `slug`."""
        client.force_login(user)
        body = {"team": slug, "name": "q", "region": "us-central1", "chief": A100_8}
        answer = client.post("/api/v1/jobs/validate/", json.dumps(body),
                             content_type="application/json")
        assert answer.status_code == 200 and answer.json()["valid"], answer.content
        return answer.json()["queue"]

    assert landing(bob, "speech")["where"] == "admitted"
    borrowing = job(team, ann, 16)
    assert admission.tick().admit == [str(borrowing.pk)]
    runs(backend, borrowing, checkpoint_step=40)
    # Within speech's guarantee: vision's borrowing job would be stopped for it.
    said = landing(bob, "speech")
    assert (said["where"], said["place"], said["of"], said["stops"]) == (
        "waiting", 1, 1, [borrowing.pk]), said
    assert f"job {borrowing.pk} would be stopped at a checkpoint" in said["note"]
    # Vision holds its guarantee and all it may borrow: its next job waits, stopping nothing.
    mine = landing(ann, "vision")
    assert (mine["where"], mine["stops"]) == ("waiting", []) and mine["reason"], mine
    # Asking changed nothing: no job made, none stopped or requeued.
    assert Job.objects.count() == 1 and state_of(borrowing) == JobState.RUNNING
    assert borrowing.attempts.count() == 1 and backend.cancelled == []
    # The compose page's panel says the same.
    from tests.compose.test_compose_page import form_data

    client.force_login(bob)
    page = client.post("/jobs/validate/", form_data(
        team="speech", chief_machine_type="a2-highgpu-8g", chief_accelerator_type=A100,
        chief_accelerator_count="8", workers_replica_count="0", region="us-central1"))
    html = page.content.decode()
    assert 'id="queue-landing"' in html and f"job {borrowing.pk} would be stopped" in html, \
        html[-2000:]
    # With the queue off there is nothing to say.
    settings.CP_ADMISSION = False
    assert landing(bob, "speech") is None


def test_the_queue_page_shows_why_and_where_and_a_quota_below_the_running_jobs(
        team: Team, other_team: Team, backend: Any) -> None:
    ann = make_user("ann", team, Role.MEMBER)
    TeamQuota.objects.create(team=team, flavors=[
        {"accelerator": A100, "region": "us-central1", "spot": False, "guarantee": 8,
         "borrowing_limit": 0}])
    runs(backend, job(team, ann, 16, state=JobState.QUEUED))
    waiting = job(team, ann, 8)
    Job.objects.filter(pk=waiting.pk).update(queue={"place": 1, "reason": "team vision would "
                                                    "hold 24 of its 8"})
    hidden = job(other_team, make_user("sol", other_team, Role.MEMBER), 8)
    client = Client()
    client.force_login(ann)
    page = client.get("/queue/").content.decode()
    assert "team vision would hold 24 of its 8" in page
    assert f"/jobs/{waiting.pk}/" in page and f"/jobs/{hidden.pk}/" not in page
    assert "holds 16 NVIDIA_TESLA_A100 in us-central1 (on-demand), above the 8" in page
