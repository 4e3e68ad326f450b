"""A deploy whose Artifact Registry image or tag does not exist is refused before Vertex is asked,
naming the field and the tags that exist; images outside Artifact Registry (and Google's prebuilt
containers) deploy as before; a registry that cannot be reached refuses rather than accepts."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from controlplane.backends import errors
from controlplane.backends.images_base import get_image_registry, parse_artifact_image
from controlplane.runs.models import Job
from controlplane.serving import images, lifecycle, options
from controlplane.serving.models import Deployment, Endpoint, ModelEntry
from tests.serving.fakes import FakeServing
from tests.serving.test_lifecycle import ready_endpoint, ready_entry

REPO = "us-docker.pkg.dev/acme/serving"


@pytest.mark.parametrize(("uri", "parts"), [
    (f"{REPO}/gpt:v2", ("us", "acme", "serving", "gpt", "v2", "")),
    (f"{REPO}/team/gpt", ("us", "acme", "serving", "team/gpt", "latest", "")),
    ("europe-west4-docker.pkg.dev/p/r/img@sha256:" + "a" * 64,
     ("europe-west4", "p", "r", "img", "", "sha256:" + "a" * 64)),
])
def test_artifact_registry_uris_are_parsed(uri: str, parts: tuple) -> None:
    image = parse_artifact_image(uri)
    assert image is not None
    assert (image.location, image.project, image.repository, image.image, image.tag,
            image.digest) == parts


@pytest.mark.parametrize("uri", ["nvcr.io/nvidia/tritonserver:24.08-py3", "gcr.io/p/img:1",
                                 "python:3.11", "img", "us-docker.pkg.dev/only-two/parts"])
def test_other_registries_are_not_artifact_registry(uri: str) -> None:
    assert parse_artifact_image(uri) is None


@pytest.fixture
def registry(fake: FakeServing) -> Any:
    images_registry = get_image_registry()
    for tag in ("v1", "v2", *(f"old-{i:02d}" for i in range(12))):  # pushed in this order
        images_registry.push(f"{REPO}/gpt:{tag}")
    return images_registry


def test_a_missing_tag_is_refused_with_the_tags_that_exist(registry: Any) -> None:
    with pytest.raises(images.ImageRefused) as refused:
        images.require_existing(f"{REPO}/gpt:v3")
    message = str(refused.value)
    assert refused.value.field == "image_uri"
    assert message.startswith("image_uri: ") and "no tag 'v3'" in message
    # The newest pushes first, at most ten of them.
    assert "its tags: old-11, old-10, old-09" in message and "and 4 more" in message
    images.require_existing(f"{REPO}/gpt:v2")


def test_a_missing_image_or_repository_is_refused(registry: Any) -> None:
    with pytest.raises(images.ImageRefused, match="holds no image named 'bert'"):
        images.require_existing(f"{REPO}/bert:v1")
    with pytest.raises(images.ImageRefused, match="repositories/nope, which does not exist"):
        images.require_existing("us-docker.pkg.dev/acme/nope/gpt:v1")


def test_images_outside_artifact_registry_and_google_s_prebuilt_ones_are_accepted(
        registry: Any) -> None:
    registry.error = errors.TransientBackendError("unreachable")  # never asked
    images.require_existing("nvcr.io/nvidia/tritonserver:24.08-py3")
    images.require_existing("us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4:latest")


def test_an_unreachable_registry_refuses_and_says_so(registry: Any) -> None:
    registry.error = errors.TransientBackendError("ListDockerImages: ServiceUnavailable: down")
    with pytest.raises(images.ImageRefused, match=r"could not be reached.*ServiceUnavailable"):
        images.require_existing(f"{REPO}/gpt:v1")


@pytest.fixture
def stale(registry: Any, queued: list, trained_job: Job, member: Any
          ) -> tuple[Endpoint, ModelEntry]:
    entry = ready_entry(trained_job, member)
    ModelEntry.objects.filter(pk=entry.pk).update(image_uri=f"{REPO}/gpt:v9")
    entry.refresh_from_db()
    return ready_endpoint(trained_job.team, member), entry


def test_the_api_refuses_the_deploy_naming_the_field(
        stale: tuple[Endpoint, ModelEntry], member: Any) -> None:
    endpoint, entry = stale
    client = APIClient()
    client.force_authenticate(member)
    answer = client.post(f"/api/v1/serving/endpoints/{endpoint.pk}/deployments/",
                         {"model": entry.pk}, format="json")
    assert answer.status_code == 400
    assert "no tag 'v9'" in answer.json()["image_uri"][0]
    assert "old-11" in answer.json()["image_uri"][0]
    assert not Deployment.objects.exists()


def test_the_form_refuses_the_deploy_with_the_tags(
        stale: tuple[Endpoint, ModelEntry], member: Any) -> None:
    endpoint, entry = stale
    client = Client()
    client.force_login(member)
    page = client.post(reverse("serving-endpoint-deploy", args=[endpoint.pk]),
                       {"model": entry.pk, "machine_type": "n1-standard-4", "min_replicas": 1,
                        "max_replicas": 1, "traffic_percent": 100, "accelerator_count": 0,
                        "autoscaling_target": 0}, follow=True)
    assert "no tag &#x27;v9&#x27;" in page.content.decode()
    assert not Deployment.objects.exists()
    # The product's own image exists: the same model with it deploys.
    ModelEntry.objects.filter(pk=entry.pk).update(image_uri=options.serving_image())
    entry.refresh_from_db()
    assert lifecycle.deploy(endpoint=endpoint, entry=entry, user=member,
                            machine_type="n1-standard-4").pk
