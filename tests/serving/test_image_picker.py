"""The serving image picker: a team sees the images of the Artifact Registry repositories
labelled with its slug (newest tags first) and Google's prebuilt prediction containers, never
another team's; a model registered with an image that does not exist is refused on image_uri
with the tags that do."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from controlplane.backends import errors
from controlplane.backends.images_base import get_image_registry
from controlplane.serving.models import ModelEntry
from tests.serving.fakes import FakeImages

MINE = "us-central1-docker.pkg.dev/local-project/vision-serving/gpt-server"
THEIRS = "us-central1-docker.pkg.dev/local-project/speech-serving/asr-server"


@pytest.fixture
def pushed(fake: Any) -> FakeImages:
    images = get_image_registry()
    assert isinstance(images, FakeImages)
    images.push(f"{MINE}:v1", {"cp-team": "vision"})
    images.push(f"{MINE}:v2")
    images.push(f"{THEIRS}:v9", {"cp-team": "speech"})
    images.push("us-central1-docker.pkg.dev/local-project/unlabelled/tool:1")
    return images


def api(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_team_picks_from_its_own_repositories_and_google_s_prebuilt_ones(
        pushed: FakeImages, member: Any, outsider: Any) -> None:
    body = api(member).get("/api/v1/serving/images/", {"team": "vision"}).json()
    mine = [i for i in body["images"] if i["source"] == "team"]
    assert mine == [{"uri": MINE, "tags": ["v2", "v1"], "source": "team"}]
    prebuilt = {i["uri"] for i in body["images"] if i["source"] == "google"}
    assert "us-docker.pkg.dev/vertex-ai/prediction/pytorch-cpu.2-4" in prebuilt
    assert body["unreadable"] == []
    # Another team's repository is never listed, nor can its members ask for ours.
    assert all("speech-serving" not in i["uri"] for i in body["images"])
    assert api(outsider).get("/api/v1/serving/images/", {"team": "vision"}).status_code == 404
    assert api(member).get("/api/v1/serving/images/").status_code == 400
    assert api(member).get("/api/v1/serving/images/", {"team": ""}).status_code == 404


def test_an_unreadable_registry_still_offers_the_prebuilt_images(
        pushed: FakeImages, member: Any) -> None:
    pushed.error = errors.TransientBackendError("ListRepositories: connection refused")
    body = api(member).get("/api/v1/serving/images/", {"team": "vision"}).json()
    assert body["unreadable"] and "connection refused" in body["unreadable"][0]
    assert {i["source"] for i in body["images"]} == {"google"}


def test_registering_with_a_missing_tag_is_refused_on_the_image_with_the_tags_that_exist(
        pushed: FakeImages, queued: list, trained_job: Any, member: Any) -> None:
    response = api(member).post("/api/v1/serving/models/", {
        "job": trained_job.pk, "step": 60, "image_uri": f"{MINE}:v3"}, format="json")
    assert response.status_code == 400
    assert "v2, v1" in " ".join(response.json()["image_uri"])
    assert ModelEntry.objects.count() == 0
    response = api(member).post("/api/v1/serving/models/", {
        "job": trained_job.pk, "step": 60, "image_uri": f"{MINE}:v2"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["image_uri"] == f"{MINE}:v2"


def test_the_register_form_offers_the_picker(pushed: FakeImages, client: Client,
                                             member: Any) -> None:
    client.force_login(member)
    page = client.get("/serving/").content.decode()
    assert 'list="serving-images"' in page and 'data-teams="vision"' in page
    assert "js/image_picker.js" in page and '<datalist id="serving-images">' in page


def test_another_teams_image_is_refused_without_its_tags(
        pushed: FakeImages, queued: list, trained_job: Any, member: Any) -> None:
    """Issue 40, door 9: a repository labelled for speech serves none of vision's models, and
    a wrong tag there does not list what speech pushed."""
    for uri in (f"{THEIRS}:v9", f"{THEIRS}:v8"):
        response = api(member).post("/api/v1/serving/models/", {
            "job": trained_job.pk, "step": 60, "image_uri": uri}, format="json")
        assert response.status_code == 400, (uri, response.content)
        message = " ".join(response.json()["image_uri"])
        assert "another team" in message and "its tags" not in message
        assert "v9" not in message.replace(uri, "")
    assert ModelEntry.objects.count() == 0
    # An unlabelled (shared) repository still serves anyone.
    response = api(member).post("/api/v1/serving/models/", {
        "job": trained_job.pk, "step": 60,
        "image_uri": "us-central1-docker.pkg.dev/local-project/unlabelled/tool:1"}, format="json")
    assert response.status_code == 201, response.content
