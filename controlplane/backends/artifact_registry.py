"""Artifact Registry (google-cloud-artifact-registry): the docker images of a repository and
their tags, read with Google's own client against Google (Application Default Credentials) or
the local emulator (VERTEX_EMULATOR_ADDR)."""

from __future__ import annotations

from django.conf import settings
from google.cloud import artifactregistry_v1
from google.cloud.artifactregistry_v1.services.artifact_registry.transports import (
    ArtifactRegistryGrpcTransport,
)

from controlplane.backends import clients
from controlplane.backends.images_base import ArtifactImage, ImageRegistry, ImageTags, Repository
from controlplane.backends.training import translated_errors


def image_of(docker_image_uri: str) -> str:
    """`LOCATION-docker.pkg.dev/P/R/IMAGE@sha256:...` -> `LOCATION-docker.pkg.dev/P/R/IMAGE`."""
    return docker_image_uri.split("@", 1)[0]


class ArtifactRegistryImages(ImageRegistry):
    def _client(self) -> artifactregistry_v1.ArtifactRegistryClient:
        return clients.google_client(artifactregistry_v1.ArtifactRegistryClient,
                                     ArtifactRegistryGrpcTransport,
                                     clients.emulator_channel(), regional=False)

    def repositories(self, project: str, location: str) -> list[Repository]:
        found = []
        with translated_errors("ListRepositories"):
            for repo in self._client().list_repositories(
                    parent=f"projects/{project}/locations/{location}", retry=None,
                    timeout=settings.VERTEX_RPC_TIMEOUT_S):
                if repo.format_ == artifactregistry_v1.Repository.Format.DOCKER:
                    found.append(Repository(repo.name, dict(repo.labels)))
        return found

    def images(self, repository: str) -> list[ImageTags]:
        # One row per digest; an image's tags are gathered over its digests, newest first.
        rows: dict[str, list[tuple[float, list[str]]]] = {}
        with translated_errors("ListDockerImages"):
            for row in self._client().list_docker_images(
                    parent=repository, retry=None, timeout=settings.VERTEX_RPC_TIMEOUT_S):
                at = row.update_time or row.upload_time
                rows.setdefault(image_of(row.uri), []).append(
                    (at.timestamp() if at else 0.0, list(row.tags)))
        return [ImageTags(path, tuple(dict.fromkeys(
                    tag for _, tags in sorted(found, key=lambda r: r[0], reverse=True)
                    for tag in tags)))
                for path, found in sorted(rows.items())]

    def image_tags(self, image: ArtifactImage) -> list[str] | None:
        # ListDockerImages answers one row per digest, each with the tags pointing at it; the
        # repository's other images are skipped (the API filters on nothing narrower).
        rows = []
        with translated_errors("ListDockerImages"):
            for row in self._client().list_docker_images(
                    parent=image.repository_name, retry=None,
                    timeout=settings.VERTEX_RPC_TIMEOUT_S):
                if image_of(row.uri) == image.host_path:
                    rows.append((row.update_time or row.upload_time, list(row.tags)))
        if not rows:
            return None
        rows.sort(key=lambda r: r[0].timestamp() if r[0] else 0.0, reverse=True)
        return list(dict.fromkeys(tag for _, tags in rows for tag in tags))
