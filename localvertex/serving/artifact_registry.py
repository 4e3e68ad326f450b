"""google.devtools.artifactregistry.v1.ArtifactRegistry, read side: ListRepositories (with their
labels) and ListDockerImages, the docker images of a repository with their tags, so a deploy can
check its image before Vertex pulls it and a team can pick one of its own.

The images it knows: the product's own serving image (CP_SERVING_IMAGE or CP_DEFAULT_IMAGE, as
the control plane reads them) and whatever a test pushes through the admin service:
PushImage {"uri": "LOCATION-docker.pkg.dev/P/R/IMAGE:TAG", "labels": {...}} (the labels are
the repository's, set when it is first pushed to). Like the emulator's other state of
the moment (faults, serving replicas), they live in memory. A repository exists once an image
was pushed into it; listing one that does not is NOT_FOUND, as on Google.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from datetime import UTC, datetime

import grpc
from google.cloud.artifactregistry_v1.types import artifact, repository

from localvertex.core.errors import invalid, not_found

SERVICE = "google.devtools.artifactregistry.v1.ArtifactRegistry"
# The control plane's default image (config/settings.py, CP_DEFAULT_IMAGE).
PRODUCT_IMAGE = "us-central1-docker.pkg.dev/local-project/training/trainers:0.1.0"
_PARENT = re.compile(r"^projects/([^/]+)/locations/([^/]+)/repositories/([^/]+)$")
_LOCATION = re.compile(r"^projects/([^/]+)/locations/([^/]+)$")
_URI = re.compile(r"^([a-z][a-z0-9-]*)-docker\.pkg\.dev/([^/]+)/([^/]+)/([a-z0-9][a-z0-9._/-]*)"
                  r":([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})$")


def product_images() -> list[str]:
    return sorted({os.environ.get("CP_SERVING_IMAGE") or os.environ.get("CP_DEFAULT_IMAGE")
                   or PRODUCT_IMAGE, PRODUCT_IMAGE})


class ArtifactRegistryService:
    def __init__(self, images: list[str] | None = None) -> None:
        self._lock = threading.Lock()
        # (project, location, repository) -> image path -> tag -> (digest, pushed at)
        self._repositories: dict[tuple[str, str, str],
                                 dict[str, dict[str, tuple[str, datetime]]]] = {}
        self._labels: dict[tuple[str, str, str], dict[str, str]] = {}
        for uri in product_images() if images is None else images:
            self.push(uri)

    def push(self, uri: str, labels: dict[str, str] | None = None) -> str:
        """Record `uri` (with its tag) as pushed; returns its digest. A tag moves to the newest
        push, as docker push does."""
        match = _URI.match(uri)
        if match is None:
            raise invalid(f"uri {uri!r} is not LOCATION-docker.pkg.dev/PROJECT/"
                          "REPOSITORY/IMAGE:TAG")
        location, project, repository, image, tag = match.groups()
        digest = "sha256:" + hashlib.sha256(uri.encode()).hexdigest()
        with self._lock:
            self._labels.setdefault((project, location, repository), dict(labels or {}))
            tags = self._repositories.setdefault((project, location, repository), {})
            tags.setdefault(image, {})[tag] = (digest, datetime.now(UTC))
        return digest

    def list_docker_images(self, request, context):
        match = _PARENT.match(request.parent)
        if match is None:
            raise invalid(f"parent {request.parent!r} is not "
                          "projects/PROJECT/locations/LOCATION/repositories/REPOSITORY")
        project, location, repository = match.groups()
        with self._lock:
            images = self._repositories.get((project, location, repository))
            if images is None:
                raise not_found(f"repository {request.parent} not found")
            rows = []
            for image, tags in sorted(images.items()):
                by_digest: dict[tuple[str, datetime], list[str]] = {}
                for tag, pushed in tags.items():
                    by_digest.setdefault(pushed, []).append(tag)
                for (digest, at), digest_tags in sorted(by_digest.items()):
                    rows.append(artifact.DockerImage(
                        name=(f"{request.parent}/dockerImages/"
                              f"{image.replace('/', '%2F')}@{digest}"),
                        uri=f"{location}-docker.pkg.dev/{project}/{repository}/{image}@{digest}",
                        tags=sorted(digest_tags), upload_time=at, update_time=at,
                        media_type="application/vnd.docker.distribution.manifest.v2+json"))
        return artifact.ListDockerImagesResponse.pb(
            artifact.ListDockerImagesResponse(docker_images=rows))

    def list_repositories(self, request, context):
        match = _LOCATION.match(request.parent)
        if match is None:
            raise invalid(f"parent {request.parent!r} is not "
                          "projects/PROJECT/locations/LOCATION")
        project, location = match.groups()
        with self._lock:
            found = [repository.Repository(
                        name=f"projects/{p}/locations/{loc}/repositories/{r}",
                        format_=repository.Repository.Format.DOCKER,
                        labels=self._labels.get((p, loc, r), {}))
                     for (p, loc, r) in sorted(self._repositories)
                     if (p, loc) == (project, location)]
        return repository.ListRepositoriesResponse.pb(
            repository.ListRepositoriesResponse(repositories=found))

    def push_image(self, request: dict, context: grpc.ServicerContext) -> dict:
        uri = str(request.get("uri", ""))
        labels = request.get("labels") or {}
        if not isinstance(labels, dict):
            raise invalid("labels must be an object of strings")
        return {"uri": uri, "digest": self.push(uri, {str(k): str(v)
                                                      for k, v in labels.items()})}

    def methods(self) -> dict[str, tuple[object, type]]:
        return {"ListDockerImages": (self.list_docker_images,
                                     artifact.ListDockerImagesRequest.pb()),
                "ListRepositories": (self.list_repositories,
                                     repository.ListRepositoriesRequest.pb())}

    def admin_methods(self) -> dict[str, object]:
        return {"PushImage": self.push_image}
