"""The emulator's Artifact Registry over the real gRPC protocol: Google's own client lists the
docker images of a repository with their tags (the product's serving image, and what the admin
service pushed), and the control plane's check refuses a tag that is not there."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.api_core import exceptions as gexc
from google.cloud import artifactregistry_v1
from google.cloud.artifactregistry_v1.services.artifact_registry.transports import (
    ArtifactRegistryGrpcTransport,
)

from controlplane.backends import images_base
from controlplane.serving import images
from localvertex.admin.cli import main as admin_main
from localvertex.serving.artifact_registry import PRODUCT_IMAGE

REPO = "projects/acme/locations/europe-west4/repositories/serving"


@pytest.fixture
def client(emulator: Any) -> Iterator[artifactregistry_v1.ArtifactRegistryClient]:
    channel = emulator.channel()
    yield artifactregistry_v1.ArtifactRegistryClient(
        transport=ArtifactRegistryGrpcTransport(channel=channel))
    channel.close()


def test_google_s_client_lists_pushed_images_and_their_tags(emulator: Any, client: Any) -> None:
    assert admin_main(["--target", emulator.admin_address, "--token-file",
                       str(emulator.data_dir / "auth_token"), "image", "--uri",
                       "europe-west4-docker.pkg.dev/acme/serving/gpt:v1"]) == 0
    with emulator.admin() as admin:
        admin.push_image("europe-west4-docker.pkg.dev/acme/serving/gpt:v2")
        with pytest.raises(grpc.RpcError) as bad:
            admin.call("PushImage", {"uri": "not an image"})
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    rows = list(client.list_docker_images(parent=REPO))
    assert sorted(t for row in rows for t in row.tags) == ["v1", "v2"]
    assert all(row.uri.startswith("europe-west4-docker.pkg.dev/acme/serving/gpt@sha256:")
               for row in rows)
    assert rows[0].name.startswith(f"{REPO}/dockerImages/gpt@sha256:")
    # The product's own serving image is there from the start.
    product = images_base.parse_artifact_image(PRODUCT_IMAGE)
    assert product is not None
    assert any(product.tag in row.tags
               for row in client.list_docker_images(parent=product.repository_name))
    with pytest.raises(gexc.NotFound):
        list(client.list_docker_images(parent=REPO.replace("serving", "missing")))


def test_the_deploy_check_reads_the_emulator(emulator: Any, settings: Any) -> None:
    settings.VERTEX_EMULATOR_ADDR = emulator.address
    settings.VERTEX_EMULATOR_TOKEN = emulator.token
    settings.CP_IMAGE_REGISTRY = "controlplane.backends.artifact_registry.ArtifactRegistryImages"
    images_base.get_image_registry.cache_clear()
    try:
        with emulator.admin() as admin:
            admin.push_image("us-docker.pkg.dev/acme/check/gpt:v1")
        images.require_existing("us-docker.pkg.dev/acme/check/gpt:v1")
        images.require_existing(PRODUCT_IMAGE)
        with pytest.raises(images.ImageRefused, match=r"no tag 'v7'; its tags: v1$"):
            images.require_existing("us-docker.pkg.dev/acme/check/gpt:v7")
        with pytest.raises(images.ImageRefused, match="does not exist in Artifact Registry"):
            images.require_existing("us-docker.pkg.dev/acme/elsewhere/gpt:v1")
    finally:
        images_base.get_image_registry.cache_clear()


def test_the_picker_reads_labelled_repositories_from_the_emulator(
        emulator: Any, settings: Any, db: None) -> None:
    """Google's client lists the repositories of a location with their labels; the picker keeps
    those labelled for the team and lists their images, newest tag first."""
    from controlplane.teams.models import Team

    settings.VERTEX_EMULATOR_ADDR = emulator.address

    settings.VERTEX_EMULATOR_TOKEN = emulator.token
    settings.VERTEX_PROJECT = "picker"
    settings.CP_IMAGE_LOCATIONS = ["europe-west4"]
    settings.CP_IMAGE_REGISTRY = "controlplane.backends.artifact_registry.ArtifactRegistryImages"
    images_base.get_image_registry.cache_clear()
    try:
        with emulator.admin() as admin:
            admin.push_image("europe-west4-docker.pkg.dev/picker/vision/srv:a",
                             {"cp-team": "vision"})
            admin.push_image("europe-west4-docker.pkg.dev/picker/vision/srv:b")
            admin.push_image("europe-west4-docker.pkg.dev/picker/speech/asr:z",
                             {"cp-team": "speech"})
        registry = images_base.get_image_registry()
        repositories = registry.repositories("picker", "europe-west4")
        assert {r.name: r.labels for r in repositories} == {
            "projects/picker/locations/europe-west4/repositories/speech": {"cp-team": "speech"},
            "projects/picker/locations/europe-west4/repositories/vision": {"cp-team": "vision"}}
        found, unreadable = images.team_images(Team.objects.create(name="V", slug="vision"))
        mine = [(i.uri, i.tags) for i in found if i.source == "team"]
        assert mine == [("europe-west4-docker.pkg.dev/picker/vision/srv", ("b", "a"))]
        assert unreadable == []
    finally:
        images_base.get_image_registry.cache_clear()
