"""Registry entries, endpoints and deployments against a fake Vertex: the ids are derived from
primary keys, every step is safe to repeat, operations are followed by the sweep."""

from __future__ import annotations

from typing import Any

import pytest

from controlplane.backends.images_base import get_image_registry
from controlplane.runs.models import Job, JobState
from controlplane.serving import lifecycle, registry, traffic
from controlplane.serving.models import Deployment, Endpoint, ModelEntry
from tests.serving.fakes import FakeServing


def ready_entry(job: Job, user: Any, step: int | None = 60) -> ModelEntry:
    entry = registry.register(job=job, user=user, step=step)
    registry.upload(entry.pk)
    entry.refresh_from_db()
    return entry


def ready_endpoint(team: Any, user: Any, **fields: Any) -> Endpoint:
    endpoint = lifecycle.create_endpoint(team=team, user=user, name="gpt-prod", **fields)
    lifecycle.send_create(endpoint.pk)
    endpoint.refresh_from_db()
    return endpoint


def test_a_checkpoint_becomes_a_registry_entry_uploaded_once(
        fake: FakeServing, queued: list, trained_job: Job, member: Any) -> None:
    entry = registry.register(job=trained_job, user=member, step=30)
    # The trainer printed a local path; Vertex gets the gs:// folder under the job's output.
    assert entry.artifact_uri == f"{trained_job.output_uri}/checkpoints/step-00000030"
    assert entry.command == ["python", "-m", "trainers.serve"]
    registry.upload(entry.pk)
    registry.upload(entry.pk)  # a redelivered task
    entry.refresh_from_db()
    assert entry.state == ModelEntry.State.READY
    assert entry.vertex_name.endswith(f"/models/cp-model-{entry.pk}")
    assert [c for c in fake.calls if c[0] == "upload"] == [("upload", f"cp-model-{entry.pk}")]
    assert fake.models[entry.vertex_name]["labels"]["cp-job"] == str(trained_job.pk)


def test_registry_refuses_what_cannot_be_served(
        fake: FakeServing, queued: list, trained_job: Job, member: Any) -> None:
    with pytest.raises(registry.RegistryError, match="checkpoints: 30, 60"):
        registry.register(job=trained_job, user=member, step=45)
    final = registry.register(job=trained_job, user=member, step=None)
    assert final.artifact_uri == f"{trained_job.output_uri}/model"
    with pytest.raises(registry.RegistryError, match="registered already"):
        registry.register(job=trained_job, user=member, step=None)
    Job.objects.filter(pk=trained_job.pk).update(request={"strategy": "tpu_jax"},
                                                 state=JobState.RUNNING)
    trained_job.refresh_from_db()
    with pytest.raises(registry.RegistryError, match="cannot read: register its final export"):
        registry.register(job=trained_job, user=member, step=30)
    with pytest.raises(registry.RegistryError, match="only a job that succeeded"):
        registry.register(job=trained_job, user=member, step=None)
    # A sharded checkpoint (FSDP, ZeRO) is servable: the container consolidates it.
    Job.objects.filter(pk=trained_job.pk).update(request={"strategy": "fsdp"})
    trained_job.refresh_from_db()
    sharded = registry.register(job=trained_job, user=member, step=30)
    assert sharded.step == 30 and sharded.artifact_uri.endswith("/step-00000030")


def test_one_checkpoint_is_registered_once_in_each_runtime(
        fake: FakeServing, backend: Any, queued: list, trained_job: Job, member: Any) -> None:
    copy = "us-docker.pkg.dev/acme/serving/tritonserver:24.10-py3"
    get_image_registry().push(copy)
    eager = registry.register(job=trained_job, user=member, step=60)
    compiled = registry.register(job=trained_job, user=member, step=60, runtime="compiled")
    aot = registry.register(job=trained_job, user=member, step=60, runtime="aot")
    triton = registry.register(job=trained_job, user=member, step=60, runtime="triton",
                               image_uri=copy)
    # The same weights: one entry per runtime.
    assert eager.artifact_uri == compiled.artifact_uri == aot.artifact_uri
    assert [e.runtime for e in (eager, compiled, aot, triton)] == [
        "eager", "compiled", "aot", "triton"]
    assert len({e.pk for e in (eager, compiled, aot, triton)}) == 4
    # The same checkpoint in the same runtime twice is still refused.
    for runtime, image in (("eager", ""), ("compiled", ""), ("triton", copy)):
        with pytest.raises(registry.RegistryError, match="registered already"):
            registry.register(job=trained_job, user=member, step=60, runtime=runtime,
                              image_uri=image)
    assert ModelEntry.objects.filter(job=trained_job, step=60).count() == 4


def test_deploy_follows_the_operation_and_is_sent_once(
        fake: FakeServing, queued: list, trained_job: Job, member: Any) -> None:
    entry = ready_entry(trained_job, member)
    endpoint = ready_endpoint(trained_job.team, member)
    assert endpoint.state == Endpoint.State.READY
    assert endpoint.vertex_name.endswith(f"/endpoints/cp-ep-{endpoint.pk}")

    fake.hold_operations = True
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                  machine_type="n1-standard-4", min_replicas=2, max_replicas=4,
                                  autoscaling_metric="cpu", autoscaling_target=70)
    lifecycle.send_deploy(deployment.pk)
    lifecycle.send_deploy(deployment.pk)
    deploys = [c[1] for c in fake.calls if c[0] == "deploy"]
    assert len(deploys) == 1
    spec, split = deploys[0]
    assert spec.deployed_model_id == str(deployment.pk) and spec.model_name == entry.vertex_name
    assert (spec.min_replicas, spec.max_replicas, spec.autoscaling_metric,
            spec.autoscaling_target) == (2, 4, "cpu", 70)
    assert split == {"0": 100}

    lifecycle.reconcile_all()
    deployment.refresh_from_db()
    assert deployment.state == Deployment.State.DEPLOYING
    fake.finish_all()
    lifecycle.reconcile_all()
    deployment.refresh_from_db()
    assert deployment.state == Deployment.State.DEPLOYED
    assert deployment.available_replicas == 2


def test_a_failed_deploy_keeps_vertex_s_message(
        fake: FakeServing, queued: list, trained_job: Job, member: Any) -> None:
    entry = ready_entry(trained_job, member)
    endpoint = ready_endpoint(trained_job.team, member)
    fake.hold_operations = True
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                  machine_type="n1-standard-4")
    lifecycle.send_deploy(deployment.pk)
    fake.finish_all(error="Model server never became ready.")
    lifecycle.reconcile_all()
    deployment.refresh_from_db()
    assert deployment.state == Deployment.State.FAILED
    assert "never became ready" in deployment.error_message


@pytest.mark.parametrize(("resources", "message"), [
    ({"machine_type": "n9-nothing"}, "unknown machine type"),
    ({"machine_type": "n1-standard-4", "accelerator_type": "NVIDIA_L4",
      "accelerator_count": 1}, "takes no NVIDIA_L4"),
    ({"machine_type": "n1-standard-4", "accelerator_type": "NVIDIA_TESLA_T4",
      "accelerator_count": 3}, "in counts of 1, 2, 4"),
    ({"machine_type": "n1-standard-4", "min_replicas": 3, "max_replicas": 2}, "max_replicas"),
    ({"machine_type": "n1-standard-4", "autoscaling_metric": "accelerator",
      "autoscaling_target": 60}, "needs an accelerator"),
    ({"machine_type": "n1-standard-4", "autoscaling_metric": "cpu",
      "autoscaling_target": 0}, "percentage"),
])
def test_resources_are_checked_before_anything_is_sent(
        fake: FakeServing, queued: list, trained_job: Job, member: Any,
        resources: dict, message: str) -> None:
    entry = ready_entry(trained_job, member)
    endpoint = ready_endpoint(trained_job.team, member)
    with pytest.raises(lifecycle.ServingError, match=message):
        lifecycle.deploy(endpoint=endpoint, entry=entry, user=member, **resources)
    assert not Deployment.objects.exists()


def test_a_second_model_takes_its_share_and_undeploy_hands_it_back(
        fake: FakeServing, queued: list, trained_job: Job, member: Any,
        django_capture_on_commit_callbacks: Any) -> None:
    first_entry = ready_entry(trained_job, member, step=30)
    second_entry = ready_entry(trained_job, member, step=60)
    endpoint = ready_endpoint(trained_job.team, member)
    first = lifecycle.deploy(endpoint=endpoint, entry=first_entry, user=member,
                             machine_type="n1-standard-4")
    lifecycle.send_deploy(first.pk)
    second = lifecycle.deploy(endpoint=endpoint, entry=second_entry, user=member,
                              machine_type="n1-standard-4", traffic_percent=20)
    lifecycle.send_deploy(second.pk)
    assert fake.get_endpoint(endpoint.vertex_name).traffic_split == {
        str(first.pk): 80, str(second.pk): 20}

    with django_capture_on_commit_callbacks(execute=True):
        lifecycle.request_undeploy(Deployment.objects.get(pk=first.pk))
    assert queued[-1] == ("undeploy", (str(first.pk),))
    lifecycle.send_undeploy(first.pk)
    assert fake.get_endpoint(endpoint.vertex_name).traffic_split == {str(second.pk): 100}
    first.refresh_from_db()
    assert first.state == Deployment.State.UNDEPLOYED


def test_each_deployment_shows_the_share_the_endpoint_gives_it(
        fake: FakeServing, queued: list, trained_job: Job, member: Any) -> None:
    endpoint = ready_endpoint(trained_job.team, member)
    # Checkpoints 30 and 60 and the final export, asking 100 %, 50 % and 34 % in turn.
    deployments = []
    for step, percent in [(30, 100), (60, 50), (None, 34)]:
        entry = ready_entry(trained_job, member, step=step)
        deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                      machine_type="n1-standard-4", traffic_percent=percent)
        lifecycle.send_deploy(deployment.pk)
        deployments.append(deployment)
    split = fake.get_endpoint(endpoint.vertex_name).traffic_split
    assert split == {str(deployments[0].pk): 33, str(deployments[1].pk): 33,
                     str(deployments[2].pk): 34}
    lifecycle.reconcile_all()
    shown = {d.pk: Deployment.objects.get(pk=d.pk).traffic_percent for d in deployments}
    assert shown == {int(k): v for k, v in split.items()}
    assert sum(shown.values()) == 100

    lifecycle.request_undeploy(Deployment.objects.get(pk=deployments[2].pk))
    lifecycle.send_undeploy(deployments[2].pk)
    lifecycle.reconcile_all()
    assert [Deployment.objects.get(pk=d.pk).traffic_percent for d in deployments[:2]] == [50, 50]


def test_autoscaling_is_changed_with_mutate(
        fake: FakeServing, queued: list, trained_job: Job, member: Any) -> None:
    entry = ready_entry(trained_job, member)
    endpoint = ready_endpoint(trained_job.team, member)
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                  machine_type="g2-standard-8", accelerator_type="NVIDIA_L4",
                                  accelerator_count=1)
    lifecycle.send_deploy(deployment.pk)
    deployment.refresh_from_db()
    lifecycle.set_autoscaling(deployment, min_replicas=2, max_replicas=6,
                              autoscaling_metric="accelerator", autoscaling_target=50)
    lifecycle.send_mutate(deployment.pk)
    spec = next(c[1] for c in fake.calls if c[0] == "mutate")
    assert (spec.min_replicas, spec.max_replicas, spec.autoscaling_metric,
            spec.autoscaling_target) == (2, 6, "accelerator", 50)


def test_deleting_an_endpoint_undeploys_first(
        fake: FakeServing, queued: list, trained_job: Job, member: Any) -> None:
    entry = ready_entry(trained_job, member)
    endpoint = ready_endpoint(trained_job.team, member)
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                  machine_type="n1-standard-4")
    lifecycle.send_deploy(deployment.pk)
    lifecycle.request_delete(endpoint)
    lifecycle.send_delete(endpoint.pk)  # too early: a model is still deployed
    assert not [c for c in fake.calls if c[0] == "delete_endpoint"]
    lifecycle.send_undeploy(deployment.pk)
    lifecycle.send_delete(endpoint.pk)
    endpoint.refresh_from_db()
    assert endpoint.state == Endpoint.State.DELETED
    assert endpoint.vertex_name not in fake.endpoints


def test_traffic_shares_always_add_up_to_100() -> None:
    assert traffic.with_new_model({}, 30) == {"0": 100}
    assert traffic.with_new_model({"1": 50, "2": 50}, 33) == {"0": 33, "1": 34, "2": 33}
    assert traffic.without_model({"1": 60, "2": 30, "3": 10}, "1", ["2", "3"]) == {
        "2": 75, "3": 25}
    assert traffic.without_model({"1": 100, "2": 0}, "1", ["2"]) == {"2": 100}
    assert traffic.without_model({"1": 100}, "1", []) == {}


def test_each_state_changes_only_by_an_allowed_move_and_once(
        fake: FakeServing, queued: list, trained_job: Job, member: Any) -> None:
    entry = ready_entry(trained_job, member)
    assert entry.uploaded_at is not None and entry.vertex_name
    assert not entry.transition(ModelEntry.State.FAILED, error="late"), "READY is final"
    endpoint = ready_endpoint(trained_job.team, member)
    assert not endpoint.transition(Endpoint.State.CREATING)
    deployment = lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                                  machine_type="n1-standard-4")
    # Two workers read the row DEPLOYING; both see the deploy land: one of them records it.
    first, second = (Deployment.objects.get(pk=deployment.pk) for _ in range(2))
    assert first.transition(Deployment.State.DEPLOYED, available_replicas=1)
    assert not second.transition(Deployment.State.DEPLOYED, available_replicas=1)
    assert second.state == Deployment.State.DEPLOYING, "the loser's copy is left as it was"
    assert not first.transition(Deployment.State.DEPLOYING), "no way back"
    assert first.transition(Deployment.State.UNDEPLOYED, error="gone")
    first.refresh_from_db()
    assert (first.state, first.available_replicas, first.error_message) == (
        Deployment.State.UNDEPLOYED, 0, "gone")
    assert first.deployed_at is not None and first.undeployed_at is not None
