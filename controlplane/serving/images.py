"""A deploy's image must exist: an Artifact Registry image whose tag is missing is refused
before Vertex is asked (Vertex would accept the deploy and fail the pull minutes later), with
the tags that do exist. Images elsewhere (Google's prebuilt prediction containers, nvcr.io, Docker
Hub) cannot be listed and are accepted as they are; so are Google's prebuilt containers, which
live in Artifact Registry but in Google's projects, whose repositories a team's credentials may
not list (VERTEX_FACTS.md A6: `us-docker.pkg.dev/vertex-ai/prediction/...`).

An image in a repository labelled for another team (cp-team=<their slug>) serves none of this
team's models, and the refusal lists none of that repository's tags (require_usable); a
repository with no team label is shared."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from contract import labels as contract_labels
from controlplane.backends import errors
from controlplane.backends.images_base import get_image_registry, parse_artifact_image
from controlplane.teams.models import Team
from vertexplan.catalog.prediction_images import prediction_images

TAGS_SHOWN = 10
# A repository is a team's when it carries this label with the team's slug: the label every
# resource the product creates carries (jobs, endpoints, models).
TEAM_LABEL = contract_labels.TEAM
GOOGLE_PROJECTS = frozenset({"vertex-ai", "vertex-ai-restricted", "deeplearning-platform-release"})


class ImageRefused(ValueError):
    """The image cannot be deployed (or not be checked); `field` names the field holding it."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


def _listed(tags: list[str]) -> str:
    shown = ", ".join(tags[:TAGS_SHOWN])
    more = len(tags) - TAGS_SHOWN
    return shown + (f" and {more} more" if more > 0 else "") if tags else "none"


def require_existing(uri: str, *, field: str = "image_uri") -> None:
    """Raise ImageRefused unless `uri` exists in Artifact Registry or lies outside it."""
    image = parse_artifact_image(uri)
    if image is None or image.project in GOOGLE_PROJECTS:
        return
    try:
        tags = get_image_registry().image_tags(image)
    except errors.NotFound as exc:
        raise ImageRefused(f"{field}: {uri} names repository {image.repository_name}, which "
                           "does not exist in Artifact Registry", field) from exc
    except errors.BackendError as exc:
        raise ImageRefused(f"{field}: Artifact Registry could not be reached to check that "
                           f"{uri} exists ({exc}); nothing was deployed, try again", field) from exc
    if tags is None:
        raise ImageRefused(f"{field}: repository {image.repository_name} holds no image "
                           f"named {image.image!r} ({uri})", field)
    if image.tag and image.tag not in tags:  # (pinned by a digest alone: the image exists)
        raise ImageRefused(f"{field}: {image.host_path} has no tag {image.tag!r}; its tags: "
                           f"{_listed(tags)}", field)


def require_usable(uri: str, team: Team, *, field: str = "image_uri") -> None:
    """require_existing, for `team`'s model: first refused when the image's repository is
    labelled for another team (before anything of that repository is read or shown)."""
    image = parse_artifact_image(uri)
    if image is not None and image.project not in GOOGLE_PROJECTS:
        try:
            repositories = get_image_registry().repositories(image.project, image.location)
        except errors.BackendError as exc:
            raise ImageRefused(f"{field}: Artifact Registry could not be reached to check "
                               f"{uri} ({exc}); nothing was deployed, try again", field) from exc
        owner = next((r.labels.get(TEAM_LABEL) for r in repositories
                      if r.name == image.repository_name), None)
        if owner and owner != team.slug:
            raise ImageRefused(f"{field}: repository {image.repository_name} is labelled for "
                               f"another team; use one labelled {TEAM_LABEL}={team.slug}, a "
                               "shared (unlabelled) one, or an image outside Artifact "
                               "Registry", field)
    require_existing(uri, field=field)


@dataclass(frozen=True)
class PickerImage:
    uri: str  # LOCATION-docker.pkg.dev/PROJECT/REPOSITORY/IMAGE
    tags: tuple[str, ...]  # newest first
    source: str  # "team": one of the team's repositories; "google": a prebuilt container


def team_images(team: Team) -> tuple[list[PickerImage], list[str]]:
    """What a team may pick as a serving image: its own (the docker repositories labelled
    cp-team=<slug> in the configured locations) and Google's prebuilt prediction containers;
    and the locations that could not be read, with why (the rest is still listed)."""
    registry = get_image_registry()
    found: list[PickerImage] = []
    unreadable: list[str] = []
    for location in settings.CP_IMAGE_LOCATIONS or [settings.VERTEX_REGION]:
        try:
            repositories = registry.repositories(settings.VERTEX_PROJECT, location)
            for repository in repositories:
                if repository.labels.get(TEAM_LABEL) != team.slug:
                    continue
                found.extend(PickerImage(image.path, image.tags, "team")
                             for image in registry.images(repository.name))
        except errors.BackendError as exc:
            unreadable.append(f"{location}: {exc}")
    for image in prediction_images():
        path, _, tag = image.uri.rpartition(":")
        found.append(PickerImage(path, (tag,), "google"))
    return found, unreadable
