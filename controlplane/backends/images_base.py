"""The image registry port: which tags of a docker image exist, so a deploy naming one that does
not is refused before Vertex tries to pull it (a pull failure surfaces only minutes later, as a
deployment that never becomes ready).

Only Artifact Registry images (`LOCATION-docker.pkg.dev/PROJECT/REPOSITORY/IMAGE[:TAG]`) are
checked; any other registry (Docker Hub, nvcr.io, ...) is outside what the product can list.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

_ARTIFACT_REGISTRY = re.compile(
    r"^(?P<location>[a-z][a-z0-9-]*)-docker\.pkg\.dev/"
    r"(?P<project>[a-z0-9][a-z0-9.:-]*)/(?P<repository>[a-z0-9][a-z0-9._-]*)/"
    r"(?P<image>[a-z0-9][a-z0-9._/-]*?)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64}))?$")


@dataclass(frozen=True)
class ArtifactImage:
    location: str
    project: str
    repository: str
    image: str        # the path inside the repository, e.g. "serving/tiny-gpt"
    tag: str          # "latest" when the URI names none (docker's default); "" when pinned
                      # by a digest alone
    digest: str = ""  # "sha256:..." when the URI pins one

    @property
    def repository_name(self) -> str:
        return (f"projects/{self.project}/locations/{self.location}/"
                f"repositories/{self.repository}")

    @property
    def host_path(self) -> str:
        return f"{self.location}-docker.pkg.dev/{self.project}/{self.repository}/{self.image}"


def parse_artifact_image(uri: str) -> ArtifactImage | None:
    """The parts of an Artifact Registry docker image URI; None for any other registry."""
    match = _ARTIFACT_REGISTRY.match(uri.strip())
    if match is None:
        return None
    return ArtifactImage(match["location"], match["project"], match["repository"],
                         match["image"],
                         match["tag"] or ("" if match["digest"] else "latest"),
                         match["digest"] or "")


@dataclass(frozen=True)
class Repository:
    name: str  # projects/P/locations/L/repositories/R
    labels: dict[str, str]

    @property
    def host(self) -> str:
        """LOCATION-docker.pkg.dev/PROJECT/REPOSITORY, what its images' URIs start with."""
        _, project, _, location, _, repository = self.name.split("/")
        return f"{location}-docker.pkg.dev/{project}/{repository}"


@dataclass(frozen=True)
class ImageTags:
    path: str  # LOCATION-docker.pkg.dev/PROJECT/REPOSITORY/IMAGE, without tag or digest
    tags: tuple[str, ...]  # newest push first


class ImageRegistry(ABC):
    @abstractmethod
    def repositories(self, project: str, location: str) -> list[Repository]:
        """The docker repositories of a project in one location, with their labels."""

    @abstractmethod
    def images(self, repository: str) -> list[ImageTags]:
        """Every image of the repository `repository` (its full name), with its tags."""

    @abstractmethod
    def image_tags(self, image: ArtifactImage) -> list[str] | None:
        """The tags of `image` in its repository, newest push first, or None when the
        repository holds no image of that name. Raises errors.NotFound when the repository
        itself does not exist, other errors.BackendError subclasses when the registry cannot
        be read."""


@cache
def get_image_registry() -> ImageRegistry:
    return import_string(settings.CP_IMAGE_REGISTRY)()
